"""Barriers: `barrier_arrive`, `barrier_wait`, `barrier_arrive_and_wait` and a barrier's use
(`collfuzz import`, cfjax_import.py).

BarriersMixin.barrier_use turns a barrier ref (a Barrier or ClusterBarrier allocation in scope, one
static index or a lax.fori_loop slot `bars.at[i % 2]`, {"loop": NAME, "mul", "add", "mod"}) into a
case's barrier reference, for the arrive and wait ops and for a copy's barrier; barrier_op reads
the arrive and wait equations. The allocations themselves are cfjax_import_allocs'.
"""

from __future__ import annotations

from cfjax_import_values import Ref


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
