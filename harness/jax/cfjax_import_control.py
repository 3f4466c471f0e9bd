"""Control flow: `pl.when`, `lax.fori_loop`, warp_map and calls (`collfuzz import`, cfjax_import.py).

ControlMixin reads a `cond` of `pl.when` (an empty false branch) into a case's `when`, a `scan` of
a `lax.fori_loop` with a static trip count into `loop`, `pl.core_map(plgpu.WarpMesh(...))` (an
`mpmd_map` inside the kernel) into `warp_map`, inlines `pjit`/`closed_call` bodies, and refuses a
`while` (a loop whose trip count is not static). Each walks its body with cfjax_import's walk.
"""

from __future__ import annotations

from cfjax_import_values import Cond, Unknown, user_line


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
    p = eqn.params
    if p.get("reverse"):
      self.refuse(eqn, "a reversed scan")
    body = p["jaxpr"]
    if "num_consts" in p:
      n_consts = p["num_consts"]
    else:  # JAX 0.11: ft_in is a FlatTree of (consts, carry, xs)
      n_consts = len(p["ft_in"].unpack()[0])
    consts = list(getattr(body, "consts", []))
    body_jaxpr = getattr(body, "jaxpr", body)
    sub = dict(env)
    sub.update(zip(body_jaxpr.constvars, consts))
    for k, (iv, ov) in enumerate(zip(body_jaxpr.invars, eqn.invars)):
      if k < n_consts:
        sub[iv] = self.value(env, ov)
      else:
        sub[iv] = Unknown("the loop's index or carry (a case's loop body has no access to them)",
                          user_line(eqn, self.user_file))
    ops = self.walk(body_jaxpr, sub)
    return {"op": "loop", "trip_count": int(p["length"]), "body": ops}

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
