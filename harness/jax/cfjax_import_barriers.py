"""Barriers: `barrier_arrive`, `barrier_wait`, `barrier_arrive_and_wait`, `try_cluster_cancel`
(which arrives on its barrier) and a barrier's use (`collfuzz import`, cfjax_import.py).

BarriersMixin.barrier_use turns a barrier ref (a Barrier or ClusterBarrier allocation in scope, one
static index or a lax.fori_loop slot `bars.at[i % 2]`, {"loop": NAME, "mul", "add", "mod"}) into a
case's barrier reference, for the arrive and wait ops and for a copy's barrier; barrier_op reads
the arrive and wait equations; try_cluster_cancel reads plgpu.try_cluster_cancel's (its result an
SMEM allocation, whole or `.at[1]`, static integers on its leading dims; its barrier a use as
theirs, its `collective_axes` a list, left out when empty); query_cluster_cancel is refused (not
modelled). The allocations themselves are cfjax_import_allocs'.
"""

from __future__ import annotations

from cfjax_import_values import Ref, axis_names_json, user_line


class BarriersMixin:
  """Barrier uses, for cfjax_import.Importer."""

  def barrier_use(self, env, ref, transforms, eqn, what: str) -> dict:
    if not isinstance(ref, Ref) or ref.kind != "alloc" or \
        ref.alloc["kind"] not in ("barrier", "cluster_barrier"):
      self.refuse(eqn, f"{what}: the barrier is not a barrier allocation in scope")
    use = {"alloc": ref.name}
    entries = self.gmem_index(env, transforms, ref, eqn, what)
    if entries:
      e = entries[0]
      # bars.at[i % 2]: a lax.fori_loop slot (of one loop index: no `plus` terms)
      slot = isinstance(e, dict) and "loop" in e and "plus" not in e
      if len(entries) != 1 or isinstance(e, bool) or not (isinstance(e, int) or slot):
        self.refuse(eqn, f"{what}: barrier `{ref.name}` indexed with {entries!r}; a case "
                    "indexes a barrier array with one static integer or a lax.fori_loop slot "
                    "(i * m + a) % k of one loop index (not lax.axis_index, no sum)")
      use["index"] = e
    elif isinstance(ref.alloc.get("num_barriers"), int) and transforms:
      use["index"] = 0  # .at[:] of a 1-barrier array
    return use

  def barrier_op(self, eqn, env: dict) -> dict:
    """barrier_arrive, barrier_wait or barrier_arrive_and_wait -> the case's op of that name."""
    name = eqn.primitive.name
    barrier, *flat = eqn.invars
    if eqn.params.get("has_user_predicate"):
      self.refuse(eqn, f"{name} with a predicate (a case guards an arrival with `when`)")
    transforms = eqn.params["transforms_treedef"].unflatten(flat)
    return {"op": name, "barrier": self.barrier_use(env, env.get(barrier), transforms, eqn, name)}

  def try_cluster_cancel(self, eqn, env: dict) -> dict:
    """plgpu.try_cluster_cancel(res, barrier, collective_axes=...) -> the case's op: `res` an
    untransformed SMEM allocation in scope, whole or indexed by static integers on its leading
    dims (`res.at[1]`: {"alloc": "res", "index": [1]}; full slices after them, as JAX's indexer
    spells the rest of the ref), the barrier a use as an arrive's."""
    p = eqn.params
    res, barrier, *leaves = eqn.invars
    res_tree, bar_tree = p.get("result_transforms_tree"), p.get("barrier_transforms_tree")
    n_res = res_tree.num_leaves if res_tree is not None else 0
    r = env.get(res)
    if not isinstance(r, Ref) or r.kind != "alloc" or r.alloc["kind"] != "smem":
      self.refuse(eqn, "try_cluster_cancel's result is not an SMEM allocation in scope (a case "
                  "passes an SMEM allocation, whole or `.at[i]`)")
    res_t = res_tree.unflatten(leaves[:n_res]) if res_tree is not None else ()
    index = self.cancel_index(env, res_t, r, eqn)
    bar_t = bar_tree.unflatten(leaves[n_res:]) if bar_tree is not None else ()
    result = {"alloc": r.name, "index": index} if index else {"alloc": r.name}
    op = {"op": "try_cluster_cancel", "result": result,
          "barrier": self.barrier_use(env, env.get(barrier), bar_t, eqn,
                                      "try_cluster_cancel's barrier")}
    axes = p.get("collective_axes") or ()
    if axes:
      op["collective_axes"] = axis_names_json(axes)
    # Asynchronous, as a copy's write: a load the case evaluates after it reads after issuing it.
    self.wrote("alloc", r.name, index, user_line(eqn, self.user_file, self.kernel_line),
               "the try_cluster_cancel")
    return op

  def cancel_index(self, env, transforms, r: Ref, eqn) -> list:
    """A try_cluster_cancel result's transforms -> its case index: none, or one `.at[...]` of
    static integers on the leading dims (at most rank - 1 of them) and full slices after them
    (`res.at[:]` and a pl.ds of the whole dim, which JAX's indexer spells alike, are the whole
    ref)."""
    what = "try_cluster_cancel's result"
    rule = ("a case passes an SMEM allocation whole or indexed by static integers on its leading "
            "dims, `res.at[1]`")
    if r.layout:
      self.refuse(eqn, f"{what} `{r.name}` is a transformed (tiled or swizzled) allocation; {rule}")
    entries = self.gmem_index(env, transforms, r, eqn, what)
    for e in entries:
      if isinstance(e, dict) and "start" in e:
        self.refuse(eqn, f"{what} `{r.name}` is indexed with a slice ({e!r}, a `pl.ds` or `:` "
                    f"short of the whole dim); {rule}")
      if e == ":":
        self.refuse(eqn, f"{what} `{r.name}` is indexed with `:` before an integer; {rule}")
      if isinstance(e, bool) or not isinstance(e, int) or e < 0:
        self.refuse(eqn, f"{what} `{r.name}` is indexed with {e!r} (not a static integer: "
                    f"lax.axis_index or a loop index); {rule}")
    if len(entries) >= max(len(r.shape), 1):
      self.refuse(eqn, f"{what} `{r.name}` is indexed with {entries!r}: {len(entries)} "
                  f"integers on its {len(r.shape)} dims, none left for the response; {rule}")
    return list(entries)

  def query_cluster_cancel(self, eqn, env: dict, ops: list):
    """plgpu.query_cluster_cancel: refused (the case language has no op that decodes a
    try_cluster_cancel response)."""
    del env, ops
    self.refuse(eqn, "query_cluster_cancel is not modelled (a case issues try_cluster_cancel "
                "but never decodes its response)")
