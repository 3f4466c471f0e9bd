"""`plgpu.nd_loop` (`collfuzz import`, cfjax_import.py; docs/case-format.md "nd_loop").

nd_loop (jax/_src/pallas/mosaic_gpu/helpers.py, the same in 0.11.2 and 0.12.0.1) traces to
`a = lax.axis_index(axes)`, the trip count `div(G, S) + convert(lt(a, rem(G, S)))` (G the grid's
size, S = lax.axis_size(axes), a static integer) and a `while` of lax.fori_loop's shape (cond
`i < upper`; body `i + 1`, `upper` passed on, the carry if any) whose body starts with the step
`i * S + a` (a the axis index, a constant of the body) unravelled over the grid (or, with a
tiling, over (*grid / tiling, *tiling)): `rem(q, g)` and `div(q, g)` per dim, last dim first, and
with a tiling `sub[d] + tile[d] * tiling[d]` per dim. NdLoopMixin.while_loop reads exactly that
from the jaxpr (nothing is patched: a kernel's trace is the one JAX makes) into a case's
`nd_loop`: its grid from the divisors, collective axes from the axis index (a tuple's: JAX's sum
`axis_index(y) + axis_index(x) * size(y)`, checked against the mesh), tiling where the body starts
with those sums and reads no coordinate but through them; the upper bound is checked against the
grid and the same axis index. The body's ops are walked with each index coordinate bound to a loop
index (`m0`, `m1`, ... as the importer names things) and the local index (the fori index) to `t`;
an `index` entry or the `local_index` is written only when the body (or its carry) reads it. One
carried array is the op's `carry` (as a fori_loop's; its init and next, and the values loaded
before the loop and used in it, checked as a fori_loop's: cfjax_import_stale). Any other `while` is refused as before;
refused too, by name: a grid dim that is not a static integer, collective axes that are not
cluster axes or the thread axis (a grid axis, a warp axis), a carry of several values, and a
slot (an SMEM ref's first index or a barrier's index) that reads an index coordinate (a slot is
of the local index only).
"""

from __future__ import annotations

import math
import types

from cfjax_import_control import _uses_loop
from cfjax_import_values import Axis, Unknown, axis_name_json, user_line
from cfjax_import_vectors import Vec

_WHILE_REFUSED = ("unsupported primitive `while`: a loop whose trip count is not static (a "
                  "case's loop is a lax.fori_loop with Python int bounds, or a plgpu.nd_loop)")


class _NotNd(Exception):
  """The while is not one plgpu.nd_loop makes (the importer refuses it as any while)."""


def _var(v):
  from jax._src import core  # pylint: disable=import-outside-toplevel
  return v if isinstance(v, core.Var) else None


def _lit(v):
  """A jaxpr Literal's integer value, or None."""
  from jax._src import core  # pylint: disable=import-outside-toplevel
  if not isinstance(v, core.Literal):
    return None
  try:
    import numpy as np  # pylint: disable=import-outside-toplevel
    a = np.asarray(v.val)
    if a.shape == () and np.issubdtype(a.dtype, np.integer):
      return int(a)
  except Exception:  # pylint: disable=broad-except
    return None
  return None


def _is(v, w, alias: dict) -> bool:
  """Whether the jaxpr atom `v` is the var `w`, or a convert of it (`alias`)."""
  v = _var(v)
  return v is not None and (v is w or alias.get(v) is w)


def _made_by_nd_loop(eqn) -> bool:
  """Whether JAX's traceback of `eqn` reaches nd_loop's own code (helpers.py) before any user
  frame: the eqn is nd_loop's, not the user's body's (True too where JAX recorded no traceback).
  A body starting with the user's `n + m * 4` on an untiled grid is told from nd_loop's tiling
  sums this way."""
  try:
    from jax._src import source_info_util  # pylint: disable=import-outside-toplevel
    tb = eqn.source_info.traceback
    if tb is None:
      return True
    for fr in tb.frames:  # innermost first
      name = fr.file_name.replace("\\", "/")
      if name.endswith("pallas/mosaic_gpu/helpers.py"):
        return True
      if source_info_util.is_user_filename(fr.file_name):
        return False
  except Exception:  # pylint: disable=broad-except
    return True
  return True


def _other(eqn, var):
  """The operand of a binary `eqn` that is not `var` (None when neither or both are)."""
  a, b = eqn.invars
  if a is var and b is not var:
    return b
  if b is var and a is not var:
    return a
  return None


class _Prefix:
  """The start of an nd_loop's while body that nd_loop itself computes (helpers.py `wrapper`):
  the eqns, the trip's step `i * S + a`, the coordinates (rem outputs, the full grid's dims in
  order) and, with a tiling, the untiled index vars."""

  def __init__(self):
    self.eqns: set[int] = set()  # id() of the eqns that are nd_loop's, not the user's
    self.size = None  # S
    self.axis_const = None  # the body's invar holding a = lax.axis_index(axes)
    self.digits: list = []  # (var, extent) of rem outputs, the last dim first
    self.tiled: list | None = None  # the untiled index vars, one per grid dim


def _match_prefix(body, nconsts: int) -> _Prefix:
  """nd_loop's prefix of a fori-shaped while body (invars: consts, i, upper, carry...);
  _NotNd where the body does not start so; ValueError (why) where it does but a grid dim is not a
  static integer."""
  eqns = list(body.eqns)
  trip = body.invars[nconsts]
  consts = list(body.invars[:nconsts])
  p = _Prefix()
  alias: dict = {}  # var -> the step var it converts (convert_element_type)
  steps: list = []  # i * S, the step and its quotients: the vars whose converts nd_loop makes
  counted = [False]

  def same(v, w):
    return _is(v, w, alias)

  k = 0

  def next_eqn():
    """The next eqn not yet matched, skipping the fori counter `i + 1` (once) and converts of a
    step var (recorded as aliases)."""
    nonlocal k
    while k < len(eqns):
      e = eqns[k]
      if not counted[0] and e.primitive.name == "add" and any(x is trip for x in e.invars) and \
          any(_lit(x) == 1 for x in e.invars):
        counted[0] = True
        p.eqns.add(id(e))
        k += 1
        continue
      if e.primitive.name == "convert_element_type" and len(e.invars) == 1 and \
          any(_is(e.invars[0], v, alias) for v in steps):
        src = _var(e.invars[0])
        alias[e.outvars[0]] = alias.get(src, src)
        p.eqns.add(id(e))
        k += 1
        continue
      return e
    return None

  e = next_eqn()
  if e is None or e.primitive.name != "mul" or _other(e, trip) is None or \
      _lit(_other(e, trip)) is None:
    raise _NotNd()
  p.size = _lit(_other(e, trip))
  scaled = e.outvars[0]
  steps.append(scaled)
  p.eqns.add(id(e))
  k += 1
  e = next_eqn()
  if e is None or e.primitive.name != "add" or len(e.invars) != 2:
    raise _NotNd()
  a, b = e.invars
  if same(a, scaled) and any(b is c for c in consts):
    p.axis_const = b
  elif same(b, scaled) and any(a is c for c in consts):
    p.axis_const = a
  else:
    raise _NotNd()
  q = e.outvars[0]
  steps.append(q)
  p.eqns.add(id(e))
  k += 1
  while True:
    e = next_eqn()
    if e is None or e.primitive.name != "rem" or not same(e.invars[0], q):
      break
    g = _lit(e.invars[1])
    if g is None:
      raise ValueError("plgpu.nd_loop over a grid whose dims are not all static integers (a "
                       "case's nd_loop has a static grid)")
    r = e.outvars[0]
    p.eqns.add(id(e))
    k += 1
    e = next_eqn()
    if e is None or e.primitive.name != "div" or not same(e.invars[0], q) or \
        _lit(e.invars[1]) != g:
      raise _NotNd()
    p.eqns.add(id(e))
    k += 1
    p.digits.append((r, g))
    q = e.outvars[0]
    steps.append(q)
  if not p.digits:
    raise _NotNd()
  _match_tiling(p, eqns, k, body.outvars, alias)
  return p


def _match_tiling(p: _Prefix, eqns: list, k: int, outvars, alias: dict):
  """With an even number L = 2n of coordinates, a tiling where the next eqns are, for d = 0..n-1,
  `mul(R_d, F[n + d])` and `add(R_{n + d}, that)` (R the coordinates of the full grid F in order)
  and no other eqn nor the body's result reads a coordinate; sets p.tiled (the add outputs) then.
  Otherwise no tiling: those sums, if any, are the user's arithmetic on an untiled grid (the
  same index values; JAX's traceback tells them apart where it has one, _made_by_nd_loop)."""
  digits = [v for v, _ in reversed(p.digits)]  # the full grid's order
  extents = [g for _, g in reversed(p.digits)]
  if len(digits) % 2:
    return
  n = len(digits) // 2
  mine, untiled = [], []
  j = k
  for d in range(n):
    while j < len(eqns) and eqns[j].primitive.name == "convert_element_type" and \
        any(_is(eqns[j].invars[0], v, alias) for v in digits):
      alias[eqns[j].outvars[0]] = eqns[j].invars[0]
      mine.append(eqns[j])
      j += 1
    if j + 1 >= len(eqns):
      return
    m, s = eqns[j], eqns[j + 1]
    if m.primitive.name != "mul" or s.primitive.name != "add":
      return
    tile = next((y for x, y in (m.invars, m.invars[::-1]) if _is(x, digits[d], alias)), None)
    if tile is None or _lit(tile) != extents[n + d]:
      return
    if not (any(x is m.outvars[0] for x in s.invars) and
            any(_is(x, digits[n + d], alias) for x in s.invars)):
      return
    if not (_made_by_nd_loop(m) and _made_by_nd_loop(s)):
      return
    mine += [m, s]
    untiled.append(s.outvars[0])
    j += 2
  used = {id(e) for e in mine}
  raw = [v for v in digits] + [v for v, w in alias.items() if any(w is x for x in digits)]

  def reads_raw(vs):
    return any(_var(x) is not None and any(x is r for r in raw) for x in vs)

  for e in eqns[k:]:
    if id(e) not in used and reads_raw(e.invars):
      return
  if reads_raw(outvars):
    return
  p.eqns |= used
  p.tiled = untiled


class NdLoopMixin:
  """plgpu.nd_loop's `while`, for cfjax_import.Importer."""

  def while_loop(self, eqn, env: dict, ops: list):
    """A `while` that plgpu.nd_loop made -> a case's nd_loop; any other is refused."""
    try:
      op = self.nd_loop(eqn, env)
    except _NotNd:
      self.refuse(eqn, _WHILE_REFUSED)
    except ValueError as e:
      self.refuse(eqn, str(e))
    ops.append(op)

  def nd_loop(self, eqn, env: dict) -> dict:
    p = eqn.params
    cond, body = p.get("cond_jaxpr"), p.get("body_jaxpr")
    nc, nb = p.get("cond_nconsts"), p.get("body_nconsts")
    if cond is None or body is None or nc != 0 or nb is None:
      raise _NotNd()
    cj, bj = getattr(cond, "jaxpr", cond), getattr(body, "jaxpr", body)
    ncarry = len(bj.invars) - nb
    if ncarry < 2 or len(bj.outvars) != ncarry or len(cj.invars) != ncarry or \
        len(cj.eqns) != 1 or cj.eqns[0].primitive.name != "lt" or \
        list(cj.eqns[0].invars) != cj.invars[:2] or bj.outvars[1] is not bj.invars[nb + 1] or \
        _lit(eqn.invars[nb]) != 0:
      raise _NotNd()
    prefix = _match_prefix(bj, nb)
    where = user_line(eqn, self.user_file)
    # The grid, the collective axes and the trip count nd_loop computed outside the while.
    full = [g for _, g in reversed(prefix.digits)]
    if prefix.tiled is not None:
      n = len(full) // 2
      grid, tiling = [full[d] * full[n + d] for d in range(n)], full[n:]
    else:
      grid, tiling = full, None
    axis_var = eqn.invars[list(bj.invars).index(prefix.axis_const)]
    axes = self.nd_axes(eqn, self.value(env, axis_var), prefix.size)
    self.check_trip_count(eqn, env, eqn.invars[nb + 1], axis_var, math.prod(full), prefix.size)
    if ncarry > 3:
      self.refuse(eqn, f"a plgpu.nd_loop carrying {ncarry - 2} values (a case's nd_loop carries "
                  "at most one array, of rank 1 or more)")
    # The body: consts bound to their values, the local index, the coordinates, the carry.
    sub = dict(env)
    sub.update(zip(bj.constvars, getattr(body, "consts", [])))
    for iv, ov in zip(bj.invars[:nb], eqn.invars[:nb]):
      sub[iv] = self.value(env, ov)
    local = self.fresh("t", "t")
    sub[bj.invars[nb]] = Axis(local, 1, 0, loop=True)
    sub[bj.invars[nb + 1]] = Unknown("the trip count of a plgpu.nd_loop", where)
    coords = prefix.tiled if prefix.tiled is not None else [v for v, _ in reversed(prefix.digits)]
    names = []
    for v in coords:
      names.append(self.fresh("m"))
      sub[v] = Axis(names[-1], 1, 0, loop=True)
    carry = None
    for o in eqn.outvars:
      env[o] = Unknown("a value a plgpu.nd_loop returns besides its one carried array", where)
    if ncarry == 3:
      carry = self.nd_carry(eqn, env, sub, bj.invars[nb + 2], eqn.invars[nb + 2])
    rest = [e for e in bj.eqns if id(e) not in prefix.eqns]
    frame = self.enter_loop()  # a value loaded before the loop, used in it (cfjax_import_stale)
    ops = self.walk(types.SimpleNamespace(eqns=rest), sub)
    if carry is not None:
      nxt = self.operand(sub, bj.outvars[2], tuple(carry["shape"]), carry["dtype"])
      if not isinstance(nxt, Vec) or nxt.shape != tuple(carry["shape"]) or \
          nxt.dtype != carry["dtype"]:
        self.refuse(eqn, f"a plgpu.nd_loop whose body returns for its carried {carry['dtype']}"
                    f"{carry['shape']} a value the importer does not follow: "
                    f"{self.describe(nxt)} (a loop's carry is a vector value, as a "
                    "vector_store's)")
      self.check_fresh(eqn, nxt, "next", "plgpu.nd_loop", carry["name"])  # at the trip's end
      carry["next"] = nxt.j
    # A thread takes up to ceil(G / S) trips.
    self.leave_loop(frame, eqn, "plgpu.nd_loop", -(-math.prod(full) // prefix.size))
    self.refuse_coordinate_slots(eqn, ops, [n for n in names if n is not None])
    op = {"op": "nd_loop", "grid": grid, "collective_axes": axes}
    if tiling is not None:
      op["tiling"] = tiling
    kept = [n if _uses_loop([ops, carry], n) else None for n in names]
    for n, k in zip(names, kept):
      if k is None:
        self.used_names.discard(n)
    if any(k is not None for k in kept):
      op["index"] = kept
    if _uses_loop([ops, carry], local):
      op["local_index"] = local
    else:
      self.used_names.discard(local)
    return self.finish_loop_op(op, env, eqn.outvars[2] if carry is not None else None, carry,
                               ops)

  def nd_axes(self, eqn, a, size: int):
    """The collective axes of lax.axis_index(axes) (`a`, as the importer read it): one name (a
    plain Axis), or JAX's sum over a tuple of them (the last axis first, each scaled by the sizes
    of those after it), each a cluster axis or the thread axis of the mesh, their sizes' product
    `size` (S, lax.axis_size)."""
    if not isinstance(a, Axis) or a.loop or a.mod is not None or a.multiple_of is not None or \
        a.add != 0:
      raise _NotNd()
    terms = [(a.axis, a.loop, a.mul), *a.terms]
    if any(lp for _, lp, _ in terms):
      raise _NotNd()
    names = [n for n, _, _ in reversed(terms)]
    sizes = []
    for n in names:
      s = self.mesh_axis_size(n)
      if s is None:
        grid = [axis_name_json(g) for g in (self.mesh or {}).get("grid_names", [])]
        what = "a grid axis" if n in grid else "no axis of the kernel's mesh (a warp axis?)"
        self.refuse(eqn, f"a plgpu.nd_loop whose collective axis {n!r} is {what} (a case's "
                    "nd_loop deals its steps out over cluster axes and the thread axis only)")
      sizes.append(s)
    stride = 1
    for n, s in zip(reversed(names), reversed(sizes)):
      if dict((t[0], t[2]) for t in terms).get(n) != stride:
        raise _NotNd()
      stride *= s
    if stride != size:
      raise _NotNd()
    return names[0] if len(names) == 1 else names

  def mesh_axis_size(self, name):
    """The size of a cluster axis or of the thread axis of the kernel's mesh, else None."""
    mesh = self.mesh or {}
    for n, d in zip(mesh.get("cluster_names", []), mesh.get("cluster", [])):
      if n == name:
        return int(d)
    if mesh.get("thread_name") is not None and mesh["thread_name"] == name:
      return int(mesh.get("num_threads") or 1)
    return None

  def check_trip_count(self, eqn, env: dict, upper, axis_var, total: int, size: int):
    """The while's bound is nd_loop's: `q + convert(lt(a, r))`, q == G // S and r == G % S, a the
    same axis index the body's step adds."""
    d = self.defs.get(_var(upper)) if _var(upper) is not None else None
    if d is None or d.primitive.name != "add" or len(d.invars) != 2:
      raise _NotNd()
    for q, c in (d.invars, d.invars[::-1]):
      qv = self.value(env, q)
      if isinstance(qv, bool) or not isinstance(qv, int):
        continue
      while _var(c) is not None and c in self.defs and \
          self.defs[c].primitive.name == "convert_element_type":
        c = self.defs[c].invars[0]
      lt = self.defs.get(c) if _var(c) is not None else None
      if lt is None or lt.primitive.name != "lt" or lt.invars[0] is not axis_var:
        continue
      r = self.value(env, lt.invars[1])
      if qv == total // size and r == total % size:
        return
    raise _NotNd()

  def nd_carry(self, eqn, env: dict, sub: dict, iv, init_var) -> dict:
    """The nd_loop's `carry` (as a fori_loop's: ControlMixin.loop_carry): named `acc`, `acc1`, ...
    (the body's parameter is always nd_loop's `carry`), its dtype, shape and `init`; the body's
    carry bound in `sub` to {"carry": NAME}."""
    aval = getattr(iv, "aval", None)
    shape, dtype = tuple(getattr(aval, "shape", ())), str(getattr(aval, "dtype", ""))
    if not shape:
      self.refuse(eqn, f"a plgpu.nd_loop carrying the scalar {dtype}[] (a case's nd_loop carries "
                  "at most one array, of rank 1 or more)")
    if math.prod(shape) % 128:
      self.refuse(eqn, f"a plgpu.nd_loop carrying {dtype}{list(shape)}: a loop's carry holds a "
                  "multiple of 128 elements (JAX's strided layout for a warpgroup; other counts "
                  "are not modelled)")
    init = self.operand(env, init_var, shape, dtype)
    if not isinstance(init, Vec) or init.shape != shape or init.dtype != dtype:
      self.refuse(eqn, f"a plgpu.nd_loop whose init_carry {dtype}{list(shape)} is a value the "
                  f"importer does not follow: {self.describe(init)} (a loop's carry starts from "
                  "a vector value, as a vector_store's)")
    name = self.carry_name(None)
    self.check_fresh(eqn, init, "init", "plgpu.nd_loop", name)  # read at the loop
    sub[iv] = Vec({"carry": name}, shape, dtype)
    return {"name": name, "dtype": dtype, "shape": list(shape), "init": init.j}

  def refuse_coordinate_slots(self, eqn, ops, names: list):
    """A slot (an SMEM ref's first index, a barrier's index) reads an nd_loop's local index only
    (docs/case-format.md "nd_loop"): one reading an index coordinate is refused."""
    def slots(j):
      if isinstance(j, list):
        for x in j:
          yield from slots(x)
      elif isinstance(j, dict):
        if "alloc" in j and "index" in j:
          ix = j["index"]
          first = ix[0] if isinstance(ix, list) and ix else ix
          if isinstance(first, dict) and "loop" in first:
            yield first
        for v in j.values():
          yield from slots(v)

    for s in slots(ops):
      if s["loop"] in names:
        self.refuse(eqn, f"a plgpu.nd_loop whose body indexes an SMEM ref or a barrier array "
                    f"with a coordinate of loop_info.index ({s!r}); a slot reads the loop's "
                    "loop_info.local_index only")
