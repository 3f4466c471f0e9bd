// Rule family: the warp-level context (harness/core/warp_map.h). The program is expanded: ops
// inside a warp_map carry Op::warp_axis, and a When marked from_warp_map stands for a warp_map.
#include <algorithm>

#include "harness/core/warp_map.h"
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
  // The lowering semantics the message names: JAX looks a rule up per (lowering semantics,
  // primitive semantics), and the same primitives lack a Warp rule under both.
  const std::string semantics = ck.lane() ? "Lane" : "Warpgroup";
  // multiple_of's rules are registered for (Lane, Warpgroup) and (Warpgroup, Warpgroup) only: the
  // index's pl.multiple_of, lowered before the copy.
  ck.check(RuleId::kLowerWarpUnimplemented, computes_multiple_of(op), op.path, [&] {
    return Holes{{"primitive", "multiple_of"}, {"semantics", semantics}};
  });
  // The condition of a warp's pl.when, or its copy's predicate, computed after the copy's
  // indices: under (Warpgroup, PrimitiveSemantics.Warp) there is no rule for `not`.
  if (!ck.lane() && !op.from_warp_map) {
    const Cond* cond = nullptr;
    if (const auto* w = std::get_if<When>(&op.v)) cond = &w->cond;
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v); cp && cp->predicate)
      cond = &*cp->predicate;
    ck.check(RuleId::kLowerWarpUnimplemented, cond && cond_computes_not(*cond), op.path, [&] {
      return Holes{{"primitive", "not"}, {"semantics", semantics}};
    });
  }
  // lower_jaxpr_to_mosaic_gpu: no rule under PrimitiveSemantics.Warp for run_scoped, nor for
  // mpmd_map (a warp_map inside another), under either lowering semantics.
  const bool scoped = std::holds_alternative<RunScoped>(op.v);
  ck.check(RuleId::kLowerWarpUnimplemented, op.from_warp_map || scoped, op.path, [&] {
    return Holes{{"primitive", scoped ? "run_scoped" : "mpmd_map"}, {"semantics", semantics}};
  });
  if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) {
    const Alloc* a = scope.allocs.at(ar->barrier.alloc);
    ck.check(RuleId::kLowerWarpClusterArrive, a->kind == AllocKind::kClusterBarrier, op.path);
    // BarrierRef.arrive(arrival_count=4): a count needs Hopper's mbarrier.arrive. Under
    // Warpgroup the dialect's ArriveOp lowering calls it (check_warp_context_dialect).
    if (ck.lane()) {
      ck.check(RuleId::kLowerWarpArrivePreHopper, !a->orders_tensor_core && ck.arch_major() < 9,
               op.path);
    }
  }
}

void check_warp_context_dialect(Checker& ck, const Op& op, const Scope& scope) {
  if (op.warp_axis.empty() || ck.lane()) return;
  // _mgpu_arrive_op_lowering_rule under ThreadSubset.WARP: arrive(arrival_count=4) on each lane.
  if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) {
    const Alloc* a = scope.allocs.at(ar->barrier.alloc);
    ck.check(RuleId::kLowerWarpArrivePreHopper,
             a->kind != AllocKind::kClusterBarrier && !a->orders_tensor_core && ck.arch_major() < 9,
             op.path, Stage::kDialect);
  }
}

void check_warp_context_interpret(Checker& ck, const Op& op) {
  if (op.warp_axis.empty() || !op.from_warp_map) return;
  ck.check(RuleId::kInterpWarpNested, true, op.path);  // JaxprInterpreter._interpret_mpmd_map_p
}

}  // namespace collfuzz::ref
