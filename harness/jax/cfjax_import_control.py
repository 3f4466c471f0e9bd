"""Control flow: `pl.when`, `lax.fori_loop`, warp_map and calls (`collfuzz import`, cfjax_import.py).

ControlMixin reads a `cond` of `pl.when` (an empty false branch) into a case's `when`, a `scan` of
a `lax.fori_loop` with a static trip count into `loop`, `pl.core_map(plgpu.WarpMesh(...))` (an
`mpmd_map` inside the kernel) into `warp_map` and inlines `pjit`/`closed_call` bodies (a `while`
is cfjax_import_ndloop's: plgpu.nd_loop's, any other refused). Each walks its body with
cfjax_import's walk.

A fori_loop's index (the scan's first carry, counted `i + 1` by the body) is bound to a loop index
(an Axis with `loop`): when the body uses it in a GMEM index or a slot (an SMEM ref's first index
or a barrier's index, `(i * m + a) % k`), the loop gets `"index": NAME`, NAME
fresh ("i", then "i0", "i1", ...), and the entries `{"loop": NAME, ...}`; a loop whose body does not
use it has no `index` (so loops that never read it import as before). A lower bound L is folded
into each entry's `add`. A condition on the index is refused (conditions use lax.axis_index only).
A fori_loop that carries, besides its index, one array (an accumulator: `acc =
lax.fori_loop(0, n, body, init)`) gets a `carry` (docs/case-format.md "Loop-carried values"):
named after the body's parameter (else `acc`, `acc1`, ...), its dtype and shape the array's,
`init` the vector value feeding the scan's carry, `next` the one the body returns; the carry in
the body and the scan's result after the loop are `{"carry": NAME}` vector values. Anything else
a scan carries (several values, a scalar) stays Unknown, and so do its results: an op using one
is refused, naming it.
`init` is read at the loop and `next` at the end of the trip: one that loads an SMEM allocation an
op wrote since (before the loop, later in the trip) is refused, and so is a value loaded before a
loop of more than one trip and used in its body where the body writes that allocation
(cfjax_import_stale).
"""

from __future__ import annotations

import math

from cfjax_import_values import Axis, Cond, ImporterBase, Unknown, user_line
from cfjax_import_vectors import Vec

# Why a case's loop carries nothing else (an Unknown's words).
_ONE_CARRY = "a case's loop carries at most one array, of rank 1 or more, besides its index"


class ControlMixin:
  """Control flow, for cfjax_import.Importer."""

  def when(self, eqn, env: dict) -> dict:
    branches = eqn.params["branches"]
    index, *operands = eqn.invars
    c = self.value(env, index)
    if len(branches) != 2 or (branches[0].jaxpr.eqns):
      self.refuse(eqn, "a lax.cond with an else branch (a case has pl.when only)")
    if isinstance(c, Cond):
      cond = c.j
    elif isinstance(c, bool):
      cond = c
    elif isinstance(c, int):
      cond = bool(c)
    else:
      self.refuse(eqn, f"pl.when of {self.describe(c)} (a condition compares "
                  "lax.axis_index(axis) with an integer)")
    true = branches[1]
    sub = dict(env)
    sub.update(zip(true.jaxpr.constvars, true.consts))
    for iv, ov in zip(true.jaxpr.invars, operands):
      sub[iv] = self.value(env, ov)
    return {"op": "when", "cond": cond, "body": self.walk(true.jaxpr, sub)}

  def loop(self, eqn, env: dict) -> dict:
    """A scan of lax.fori_loop with a static trip count -> a case's loop. Its carry is (i, x...):
    the first carry is the index when the body's first carry output is `i + 1` and its initial
    value (fori_loop's lower bound L) a static integer; it is bound to the loop index `NAME + L`
    (NAME a fresh name, "i", "i0", ...; the case's index runs 0..n-1), and the loop op gets
    `"index": NAME` when its body (or its carry's `init` or `next`) uses it. With the index
    counted and one more carry, an array: the loop's `carry` (loop_carry, carry_next). The other
    carries, and the scan's results but a carry's, stay Unknown."""
    p = eqn.params
    if p.get("reverse"):
      self.refuse(eqn, "a reversed scan")
    body = p["jaxpr"]
    if "num_consts" in p:
      n_consts, n_carry = p["num_consts"], p.get("num_carry", 0)
    else:  # JAX 0.11: ft_in is a FlatTree of (consts, carry, xs)
      parts = p["ft_in"].unpack()
      n_consts, n_carry = len(parts[0]), len(parts[1])
    consts = list(getattr(body, "consts", []))
    body_jaxpr = getattr(body, "jaxpr", body)
    sub = dict(env)
    sub.update(zip(body_jaxpr.constvars, consts))
    where = user_line(eqn, self.user_file)
    counts = n_carry >= 1 and self.counts_trips(body_jaxpr, body_jaxpr.invars[n_consts])
    first = n_consts + (1 if counts else 0)  # the carries past the index
    carried = [_aval(v) for v in body_jaxpr.invars[first:n_consts + n_carry]]
    desc = ", ".join(f"{d}{list(s)}" for s, d in carried)
    other = Unknown(f"a value of a lax.fori_loop that carries {desc} besides its index "
                    f"({_ONE_CARRY})" if counts else
                    f"a value a scan carries ({desc}) that counts no lax.fori_loop index by one "
                    f"({_ONE_CARRY})", where)
    for k, (iv, ov) in enumerate(zip(body_jaxpr.invars, eqn.invars)):
      sub[iv] = self.value(env, ov) if k < n_consts else other
    for o in eqn.outvars:
      env[o] = other
    name = None
    carry = None
    if counts and len(carried) == 1 and carried[0][0]:
      carry = self.loop_carry(eqn, env, sub, body_jaxpr, n_consts)
      env[eqn.outvars[0]] = Unknown("the last index of a lax.fori_loop (after a case's loop, "
                                    "only its carried array is read)", where)
    if counts:
      lower = self.value(env, eqn.invars[n_consts])
      if isinstance(lower, bool) or not isinstance(lower, int):
        sub[body_jaxpr.invars[n_consts]] = Unknown(
            "the lax.fori_loop's index, whose lower bound is not a static integer", where)
      else:
        name = self.fresh("i", "i")
        sub[body_jaxpr.invars[n_consts]] = Axis(name, 1, lower, loop=True)
    frame = self.enter_loop()  # a value loaded before the loop, used in it (cfjax_import_stale)
    ops = self.walk(body_jaxpr, sub)
    op = {"op": "loop", "trip_count": int(p["length"])}
    if carry is not None:
      carry["next"] = self.carry_next(eqn, sub, body_jaxpr.outvars[1], carry)
    self.leave_loop(frame, eqn, "lax.fori_loop", int(p["length"]))
    if name is not None and _uses_loop([ops, carry], name):
      op["index"] = name
    elif name is not None:
      self.used_names.discard(name)
    return self.finish_loop_op(op, env, eqn.outvars[1] if carry is not None else None, carry,
                               ops)

  @staticmethod
  def finish_loop_op(op: dict, env: dict, result, carry, ops: list) -> dict:
    """A loop's or nd_loop's op completed: its carry (the loop's result `result` bound in `env`
    to the {"carry": NAME} value the ops after the loop read) and its body."""
    if carry is not None:
      op["carry"] = carry
      env[result] = Vec({"carry": carry["name"]}, carry["shape"], carry["dtype"])
    op["body"] = ops
    return op

  def loop_carry(self, eqn, env: dict, sub: dict, body_jaxpr, n_consts: int) -> dict:
    """The loop's `carry` for a fori_loop carrying one array besides its index: its name (the
    body's parameter's where it is a free identifier, else `acc`, `acc1`, ...), dtype, shape
    and `init` (the vector value feeding the scan's carry, read in `env`: it may not read the
    carry); the body's parameter bound in `sub` to {"carry": NAME}."""
    iv = body_jaxpr.invars[n_consts + 1]
    shape, dtype = _aval(iv)
    if math.prod(shape) % 128:
      self.refuse(eqn, f"a lax.fori_loop carrying {dtype}{list(shape)}: a loop's carry holds a "
                  "multiple of 128 elements (JAX's strided layout for a warpgroup; other counts "
                  "are not modelled)")
    init = self.operand(env, eqn.invars[n_consts + 1], shape, dtype)
    if not isinstance(init, Vec) or init.shape != shape or init.dtype != dtype:
      self.refuse(eqn, f"a lax.fori_loop whose carried {dtype}{list(shape)} starts from a value "
                  f"the importer does not follow: {self.describe(init)} (a loop's carry starts "
                  "from a vector value, as a vector_store's)")
    names = list(getattr(getattr(body_jaxpr, "debug_info", None), "arg_names", None) or [])
    wanted = names[n_consts + 1] if n_consts + 1 < len(names) else None
    name = self.carry_name(wanted)
    self.check_fresh(eqn, init, "init", "lax.fori_loop", name)  # read at the loop
    sub[iv] = Vec({"carry": name}, shape, dtype)
    return {"name": name, "dtype": dtype, "shape": list(shape), "init": init.j}

  def carry_name(self, wanted) -> str:
    """`wanted` where it is an identifier no other name of the case has; else the first free of
    `acc`, `acc1`, `acc2`, ..."""
    if isinstance(wanted, str) and wanted.isidentifier() and wanted not in self.used_names \
        and len(wanted) <= 64:
      self.used_names.add(wanted)
      return wanted
    k = 0
    while (f"acc{k}" if k else "acc") in self.used_names:
      k += 1
    name = f"acc{k}" if k else "acc"
    self.used_names.add(name)
    return name

  def carry_next(self, eqn, sub: dict, out, carry: dict):
    """The carry's `next`: the vector value the body returns for it (read in the body's `sub`,
    after its walk)."""
    shape, dtype = tuple(carry["shape"]), carry["dtype"]
    nxt = self.operand(sub, out, shape, dtype)
    if not isinstance(nxt, Vec) or nxt.shape != shape or nxt.dtype != dtype:
      self.refuse(eqn, f"a lax.fori_loop whose body returns for its carried {dtype}"
                  f"{list(shape)} a value the importer does not follow: {self.describe(nxt)} (a "
                  "loop's carry is a vector value, as a vector_store's)")
    self.check_fresh(eqn, nxt, "next", "lax.fori_loop", carry["name"])  # read at the trip's end
    return nxt.j

  @staticmethod
  def counts_trips(body_jaxpr, iv) -> bool:
    """Whether the scan body's first carry output is `iv + 1` (fori_loop's index update)."""
    from jax._src import core  # pylint: disable=import-outside-toplevel
    out = body_jaxpr.outvars[0] if body_jaxpr.outvars else None
    if not isinstance(out, core.Var):
      return False
    for e in body_jaxpr.eqns:
      if out in e.outvars:
        if e.primitive.name != "add" or len(e.invars) != 2:
          return False
        a, b = e.invars
        one = [x for x in (a, b) if isinstance(x, core.Literal)]
        return (a is iv or b is iv) and len(one) == 1 and ImporterBase.literal(one[0]) == 1
    return False

  def warp_map(self, eqn, env: dict) -> dict:
    """pl.core_map(plgpu.WarpMesh(axis_name=A)) inside a kernel -> a case's warp_map."""
    p = eqn.params
    jaxprs, meshes = p.get("jaxprs", ()), p.get("meshes", ())
    if len(jaxprs) != 1 or len(meshes) != 1 or type(meshes[0]).__name__ != "WarpMesh":
      self.refuse(eqn, "a kernel inside the kernel that is not pl.core_map(plgpu.WarpMesh(...)) "
                  "(a case nests only warp_map)")
    body = jaxprs[0]
    inner = getattr(body, "jaxpr", body)
    sub = dict(env)
    for cv, c in zip(inner.constvars, getattr(body, "consts", [])):
      sub[cv] = c
    for iv, ov in zip(inner.invars, eqn.invars):
      sub[iv] = self.value(env, ov)
    axis = self.axis_name(meshes[0].axis_name)
    return {"op": "warp_map", "axis": axis, "body": self.walk(inner, sub)}

  def inline_call(self, eqn, env: dict, ops: list):
    """pjit, closed_call, core_call, jit: the called jaxpr's ops, inline."""
    sub = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
    inner = getattr(sub, "jaxpr", sub)
    sub_env = dict(zip(inner.constvars, getattr(sub, "consts", [])))
    for iv, ov in zip(inner.invars, eqn.invars):
      sub_env[iv] = self.value(env, ov)
    ops.extend(self.walk(inner, sub_env))
    for outer, o in zip(eqn.outvars, inner.outvars):
      env[outer] = self.value(sub_env, o)


def _aval(var) -> tuple:
  """(shape, dtype name) of a jaxpr variable."""
  aval = getattr(var, "aval", None)
  return tuple(getattr(aval, "shape", ())), str(getattr(aval, "dtype", ""))


def _uses_loop(ops, name: str) -> bool:
  """Whether some index entry of `ops` (a GMEM entry, a slice start, an SMEM or barrier slot) is
  {"loop": name, ...}."""
  if isinstance(ops, list):
    return any(_uses_loop(x, name) for x in ops)
  if isinstance(ops, dict):
    if ops.get("loop") == name:
      return True
    return any(_uses_loop(v, name) for v in ops.values())
  return False
