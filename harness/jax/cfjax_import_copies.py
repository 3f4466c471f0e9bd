"""Copies: TMA copies between GMEM and SMEM and their waits (`collfuzz import`, cfjax_import.py).

CopiesMixin reads `copy_gmem_to_smem` (source, destination and barrier transforms,
`collective_axes`, `leader_tracked`, `oob_mode`, `predicate`) and `copy_smem_to_gmem` (with its
`reduction_op` and `predicate`) into the case's ops of those names; `commit_smem` and `wait_smem_to_gmem(0)`
around the latter are part of the case's op (commit, copy, wait) and add nothing.
"""

from __future__ import annotations

from cfjax_case import REDUCTION_OPS
from cfjax_import_values import Cond, Ref, axis_names_json


class CopiesMixin:
  """The copies, for cfjax_import.Importer."""

  def copy_gmem_to_smem(self, eqn, env: dict) -> dict:
    p = eqn.params
    args = list(eqn.invars)
    src, dst = args[0], args[1]
    rest = args[2:]
    barrier = None
    if p["has_barrier"]:
      barrier, rest = rest[0], rest[1:]
    n_src = p["src_transforms_treedef"].num_leaves
    n_dst = p["dst_transforms_treedef"].num_leaves
    n_bar = p["barrier_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:n_src + n_dst])
    bar_t = p["barrier_transforms_treedef"].unflatten(rest[n_src + n_dst:n_src + n_dst + n_bar])
    pred = rest[n_src + n_dst + n_bar:]
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "input":
      self.refuse(eqn, "copy_gmem_to_smem from a ref that is not a kernel input (a case "
                   "copies from an input)")
    if not isinstance(d, Ref) or d.kind != "alloc" or d.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_gmem_to_smem to a ref that is not an SMEM allocation in scope")
    op = {"op": "copy_gmem_to_smem",
          "src": {"input": s.name}, "dst": {"alloc": d.name}}
    si = self.gmem_index(env, src_t, s, eqn, "copy_gmem_to_smem's source")
    if si:
      op["src"]["index"] = si
    di = self.static_index(env, dst_t, d, eqn, "copy_gmem_to_smem's destination")
    if di:
      op["dst"]["index"] = di
    if barrier is not None:
      op["barrier"] = self.barrier_use(env, env.get(barrier), bar_t, eqn,
                                       "copy_gmem_to_smem's barrier")
    if p.get("collective_axes") is not None:
      op["collective_axes"] = axis_names_json(p["collective_axes"])
    lt = p.get("leader_tracked")
    if lt is not None:
      kind = type(lt).__name__.lower()
      axis = getattr(lt, "axis", None)
      if axis is None and "partitioned" not in str(lt).lower():
        op["leader_tracked"] = "replicated"
      else:
        op["leader_tracked"] = {"partitioned": int(axis)}
      del kind
    if p.get("oob_mode") is not None:
      op["oob_mode"] = p["oob_mode"].name.lower()
    if p.get("has_user_predicate"):
      op["predicate"] = self.copy_predicate(env, pred[0], eqn, "copy_gmem_to_smem")
    return op

  def copy_predicate(self, env: dict, var, eqn, name: str):
    """A copy's or store's `predicate=` (its last flat argument): `true`, `false` or a
    condition."""
    x = self.value(env, var)
    if isinstance(x, bool):
      return x
    if isinstance(x, Cond):
      return x.j
    self.refuse(eqn, f"{name}'s predicate is {self.describe(x)} (a predicate is a condition on "
                "lax.axis_index)")
    return None

  def copy_smem_to_gmem(self, eqn, env: dict) -> dict:
    p = eqn.params
    src, dst, *rest = eqn.invars
    pred = None
    if p.get("has_user_predicate"):  # predicate= is the last flat argument
      rest, pred = rest[:-1], rest[-1]
    n_src = p["src_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:])
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "alloc" or s.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_smem_to_gmem from a ref that is not an SMEM allocation")
    if not isinstance(d, Ref) or d.kind != "output":
      self.refuse(eqn, "copy_smem_to_gmem to a ref that is not a kernel output")
    op = {"op": "copy_smem_to_gmem", "src": {"alloc": s.name}, "dst": {"output": d.name}}
    si = self.static_index(env, src_t, s, eqn, "copy_smem_to_gmem's source")
    if si:
      op["src"]["index"] = si
    di = self.gmem_index(env, dst_t, d, eqn, "copy_smem_to_gmem's destination")
    if di:
      op["dst"]["index"] = di
    if p.get("reduction_op") is not None:  # a reducing store (TMAReductionOp), omitted when None
      if str(p["reduction_op"]) not in REDUCTION_OPS:
        self.refuse(eqn, f"copy_smem_to_gmem with reduction_op={p['reduction_op']!r} (the case "
                    f"format knows {', '.join(REDUCTION_OPS)})")
      op["reduction_op"] = str(p["reduction_op"])
    if pred is not None:
      op["predicate"] = self.copy_predicate(env, pred, eqn, "copy_smem_to_gmem")
    return op

  def commit_smem(self, eqn, env: dict, ops: list):
    pass  # part of copy_smem_to_gmem (the case's op is commit, copy, wait)

  def wait_smem_to_gmem(self, eqn, env: dict, ops: list):
    if eqn.params.get("n", 0) != 0:
      self.refuse(eqn, f"wait_smem_to_gmem({eqn.params.get('n')}) (a case waits for every "
                  "SMEM-to-GMEM copy at once: 0)")
