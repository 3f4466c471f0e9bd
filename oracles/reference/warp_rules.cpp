// Rule family: the warp-level context (harness/core/warp_map.h). The program is expanded: ops
// inside a warp_map carry Op::warp_axis, and a When marked from_warp_map stands for a warp_map.
#include <algorithm>

#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

namespace {

// A copy whose GMEM index (or SMEM slice) computes pl.multiple_of.
bool computes_multiple_of(const Op& op) {
  const auto assumes = [](const IndexEntry& e) {
    return e.folded_multiple_of || (e.dyn_start && e.dyn_start->multiple_of > 0);
  };
  const auto any = [&](const std::vector<IndexEntry>& index, const std::optional<IndexEntry>& s) {
    return std::any_of(index.begin(), index.end(), assumes) || (s && assumes(*s));
  };
  if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) return any(cp->src_index, cp->dst_slice);
  if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) return any(st->dst_index, st->src_slice);
  return false;
}

}  // namespace

void check_warp_context_lowering(Checker& ck, const Op& op, const Scope& scope) {
  if (op.warp_axis.empty()) return;
  // _multiple_of_lane_lowering_rule is registered for (Lane, Warpgroup) only: the index's
  // pl.multiple_of, lowered before the copy.
  ck.check(RuleId::kLowerWarpUnimplemented, computes_multiple_of(op), op.path, [] {
    return Holes{{"primitive", "multiple_of"}};
  });
  // lower_jaxpr_to_mosaic_gpu: no rule under (Lane, PrimitiveSemantics.Warp) for run_scoped, nor
  // for mpmd_map (a warp_map inside another).
  const bool scoped = std::holds_alternative<RunScoped>(op.v);
  ck.check(RuleId::kLowerWarpUnimplemented, op.from_warp_map || scoped, op.path, [&] {
    return Holes{{"primitive", scoped ? "run_scoped" : "mpmd_map"}};
  });
  if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) {
    const Alloc* a = scope.allocs.at(ar->barrier.alloc);
    ck.check(RuleId::kLowerWarpClusterArrive, a->kind == AllocKind::kClusterBarrier, op.path);
    // BarrierRef.arrive(arrival_count=4): a count needs Hopper's mbarrier.arrive.
    ck.check(RuleId::kLowerWarpArrivePreHopper, !a->orders_tensor_core && ck.arch_major() < 9,
             op.path);
  }
}

void check_warp_context_interpret(Checker& ck, const Op& op) {
  if (op.warp_axis.empty() || !op.from_warp_map) return;
  ck.check(RuleId::kInterpWarpNested, true, op.path);  // JaxprInterpreter._interpret_mpmd_map_p
}

}  // namespace collfuzz::ref
