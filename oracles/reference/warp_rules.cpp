// Rule family: the warp-level context (harness/core/warp_map.h). The program is expanded: ops
// inside a warp_map carry Op::warp_axis, and a When marked from_warp_map stands for a warp_map.
#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_warp_context_lowering(Checker& ck, const Op& op, const Scope& scope) {
  if (op.warp_axis.empty()) return;
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
