// A warp_map's warps run concurrently (docs/case-format.md, "warp_map"): the reference runs them
// in warp order, which changes no count, except where a copy's no-complete arrivals could
// complete a phase in another order (run.mbarrier.nocomplete_completes, undefined_runs.h), and
// where a copy that meets other undefined behaviour could issue first (UndefinedRecord::also).
#include "oracles/reference/execution_model.h"
#include "oracles/reference/undefined_runs.h"

namespace collfuzz::ref::exec {

void Execution::check_warp_arrivals(const Thread& th) {
  constexpr std::int64_t kLanesPerWarp = 32;
  constexpr std::int64_t kWarpgroupLanes = 128;
  // Per barrier (allocation, index): each warp's arrivals, in its program order.
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::vector<WarpArrival>>> arrivals;
  std::vector<const std::string*> ops;  // by the arrivals' tags
  const auto add = [&](const Step& st, const std::string& name, std::int64_t index, WarpArrival a) {
    if (st.op->warp < 0) return;
    auto& warps = arrivals[{name, index}];
    if (warps.size() <= static_cast<std::size_t>(st.op->warp))
      warps.resize(static_cast<std::size_t>(st.op->warp) + 1);
    a.tag = static_cast<std::int32_t>(ops.size());
    ops.push_back(&st.op->path);
    warps[static_cast<std::size_t>(st.op->warp)].push_back(a);
  };
  const bool gated = at_least(c_.target.jax, JaxVersion::k0_12_0_1);
  // The warp_map's multicasts: what they meet when they issue (run.multicast.outside_cluster),
  // warps in another order than the reference's meet before a no-complete arrival completes a
  // phase. Looked at only when one does (the search below finds it).
  std::vector<const CopyFacts*> multicasts;
  const auto also = [&] {
    std::vector<UndefinedBehaviour> out;
    for (const CopyFacts* f : multicasts) {
      const CopyGmemToSmem& cp = *f->copy;
      if (cp.predicate && !eval_cond(*cp.predicate, mesh_, th.rank, th.index)) continue;
      for (const std::int64_t r : multicast_targets(mesh_, f->dims, th.rank)) {
        if (r >= mesh_.num_ctas()) return std::vector{UndefinedBehaviour::kMulticastOutsideCluster};
      }
    }
    return out;
  };
  for (std::size_t k = th.pc + 1; k < th.steps.size(); ++k) {
    const Step& st = th.steps[k];
    if (st.kind == Step::Kind::kWarpMapEnd) break;
    if (st.kind == Step::Kind::kCopy) {
      const CopyFacts& f = copies_.at(st.op);
      const CopyGmemToSmem& cp = *f.copy;
      if (f.n > 1 && !(f.leader && f.n == 2)) multicasts.push_back(&f);
      // Only the Pallas-counted Barrier: an orders_tensor_core one is armed from one lane.
      if (!cp.barrier || f.barrier->orders_tensor_core || ck_.arch_major() < 9) continue;
      // A leader-tracked copy over a 2-CTA group arrives on its leader only (JAX's first_block);
      // 0.12.0.1 also gates the arrivals with the copy's predicate.
      if (f.leader && f.n == 2 && group_index(mesh_, f.dims, th.rank) != 0) continue;
      if (gated && cp.predicate && !eval_cond(*cp.predicate, mesh_, th.rank, th.index)) continue;
      const std::int64_t index = barrier_index_at(*cp.barrier, st.iteration);
      add(st, cp.barrier->alloc, index, {3 * kLanesPerWarp, true});
      add(st, cp.barrier->alloc, index, {kLanesPerWarp, false});
    } else if (st.kind == Step::Kind::kArrive) {
      const BarrierUse* use = arrival_barrier(*st.op);
      if (!use || allocs_.at(use->alloc)->kind != AllocKind::kBarrier ||
          allocs_.at(use->alloc)->orders_tensor_core)
        continue;
      add(st, use->alloc, barrier_index_at(*use, st.iteration), {4 * kLanesPerWarp, false});
    }
  }
  for (const auto& [key, warps] : arrivals) {
    const std::int64_t pending = barrier(th.rank, key.first, key.second).pending();
    check_warp_no_complete(warps, pending * kWarpgroupLanes, ops,
                           key.first + "[" + std::to_string(key.second) + "]", th.rank, also);
  }
}

}  // namespace collfuzz::ref::exec
