"""Control flow: `pl.when`, `lax.fori_loop`, warp_map and calls (`collfuzz import`, cfjax_import.py).

ControlMixin reads a `cond` of `pl.when` (an empty false branch) into a case's `when`, a `scan` of
a `lax.fori_loop` with a static trip count into `loop`, `pl.core_map(plgpu.WarpMesh(...))` (an
`mpmd_map` inside the kernel) into `warp_map`, inlines `pjit`/`closed_call` bodies, and refuses a
`while` (a loop whose trip count is not static). Each walks its body with cfjax_import's walk.

A fori_loop's index (the scan's first carry, counted `i + 1` by the body) is bound to a loop index
(an Axis with `loop`): when the body uses it in a GMEM index or a slot (an SMEM ref's first index
or a barrier's index, `(i * m + a) % k`), the loop gets `"index": NAME`, NAME
fresh ("i", then "i0", "i1", ...), and the entries `{"loop": NAME, ...}`; a loop whose body does not
use it has no `index` (so loops that never read it import as before). A lower bound L is folded
into each entry's `add`. A condition on the index is refused (conditions use lax.axis_index only);
the other carries stay Unknown (a case's loop carries no values).
"""

from __future__ import annotations

from cfjax_import_values import Axis, Cond, ImporterBase, Unknown, user_line


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
    `"index": NAME` when its body uses it. The other carries stay Unknown."""
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
    for k, (iv, ov) in enumerate(zip(body_jaxpr.invars, eqn.invars)):
      if k < n_consts:
        sub[iv] = self.value(env, ov)
      else:
        sub[iv] = Unknown("the loop's carry (a case's loop carries no values)", where)
    name = None
    if n_carry >= 1 and self.counts_trips(body_jaxpr, body_jaxpr.invars[n_consts]):
      lower = self.value(env, eqn.invars[n_consts])
      if isinstance(lower, bool) or not isinstance(lower, int):
        sub[body_jaxpr.invars[n_consts]] = Unknown(
            "the lax.fori_loop's index, whose lower bound is not a static integer", where)
      else:
        name = self.fresh("i", "i")
        sub[body_jaxpr.invars[n_consts]] = Axis(name, 1, lower, loop=True)
    ops = self.walk(body_jaxpr, sub)
    op = {"op": "loop", "trip_count": int(p["length"])}
    if name is not None and _uses_loop(ops, name):
      op["index"] = name
    elif name is not None:
      self.used_names.discard(name)
    op["body"] = ops
    return op

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

  def while_loop(self, eqn, env: dict, ops: list):
    """A `while`: refused (a case's loop has a static trip count)."""
    self.refuse(eqn, "unsupported primitive `while`: a loop whose trip count is not static (a "
                "case's loop is a lax.fori_loop with Python int bounds)")


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
