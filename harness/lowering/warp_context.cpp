#include "harness/lowering/warp_context.h"

#include "harness/core/warp_map.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

void check_warp_context(const Op& op, const CaseLookup& lookup, const Target& target) {
  if (op.warp_axis.empty()) return;
  // JAX looks a rule up per (lowering semantics, primitive semantics); the same primitives lack a
  // Warp rule under both lowering semantics, and the message names the case's.
  const std::string semantics = target.semantics == Semantics::kLane
                                    ? "LoweringSemantics.Lane"
                                    : "LoweringSemantics.Warpgroup";
  // pl.multiple_of in a copy's index: no (*, PrimitiveSemantics.Warp) rule either.
  bool multiple_of = false;
  const auto note = [&](const IndexEntry& e) {
    multiple_of = multiple_of || e.folded_multiple_of || (e.dyn_start && e.dyn_start->multiple_of);
  };
  if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
    for (const IndexEntry& e : cp->src_index) note(e);
    if (cp->dst_slice) note(*cp->dst_slice);
  } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
    for (const IndexEntry& e : st->dst_index) note(e);
    if (st->src_slice) note(*st->src_slice);
  }
  if (multiple_of) {
    raise(Stage::kLower, "NotImplementedError",
          "Unimplemented primitive in Pallas Mosaic GPU lowering: multiple_of for lowering "
          "semantics " +
              semantics +
              " and user thread semantics PrimitiveSemantics.Warp. Please file an issue at "
              "https://github.com/jax-ml/jax/issues/new/choose.",
          rule_id::kWarpUnimplemented, op.path);
  }
  // A warp's pl.when condition or copy predicate computing jnp.logical_not: `not` has no rule
  // under (Warpgroup, PrimitiveSemantics.Warp) (it has one under Lane).
  if (target.semantics == Semantics::kWarpgroup && !op.from_warp_map) {
    const Cond* cond = nullptr;
    if (const auto* w = std::get_if<When>(&op.v)) cond = &w->cond;
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v); cp && cp->predicate)
      cond = &*cp->predicate;
    if (cond && cond_computes_not(*cond)) {
      raise(Stage::kLower, "NotImplementedError",
            "Unimplemented primitive in Pallas Mosaic GPU lowering: not for lowering semantics " +
                semantics +
                " and user thread semantics PrimitiveSemantics.Warp. Please file an issue at "
                "https://github.com/jax-ml/jax/issues/new/choose.",
            rule_id::kWarpUnimplemented, op.path);
    }
  }
  // lower_jaxpr_to_mosaic_gpu: no rule for run_scoped, nor for mpmd_map (a nested warp_map),
  // under PrimitiveSemantics.Warp.
  if (op.from_warp_map || std::holds_alternative<RunScoped>(op.v)) {
    raise(Stage::kLower, "NotImplementedError",
          std::string("Unimplemented primitive in Pallas Mosaic GPU lowering: ") +
              (op.from_warp_map ? "mpmd_map" : "run_scoped") + " for lowering semantics " +
              semantics +
              " and user thread semantics PrimitiveSemantics.Warp. Please file an issue at "
              "https://github.com/jax-ml/jax/issues/new/choose.",
          rule_id::kWarpUnimplemented, op.path);
  }
  // _barrier_arrive_lowering: a CollectiveBarrierRef in a warp context.
  if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) {
    const Alloc* a = lookup.alloc(ar->barrier.alloc);
    if (a && a->kind == AllocKind::kClusterBarrier) {
      raise(Stage::kLower, "NotImplementedError",
            "Arriving on a collective barrier is not supported in a warp context",
            rule_id::kWarpClusterArrive, op.path);
    }
    // BarrierRef.arrive(arrival_count=4) on a plain barrier: counts need Hopper. Under
    // Warpgroup the dialect's ArriveOp lowering calls it (check_warp_arrive_dialect).
    if (target.semantics == Semantics::kLane && a && !a->orders_tensor_core &&
        arch_major(target.arch) < 9) {
      raise(Stage::kLower, "ValueError",
            "Only single-thread arrival is supported on pre-Hopper hardware",
            rule_id::kWarpArrivePreHopper, op.path);
    }
  }
}

void check_warp_arrive_dialect(const IrOp& op, const KernelIr& ir, Arch arch) {
  if (op.kind != IrKind::kArrive || op.op->warp_axis.empty() || arch_major(arch) >= 9) return;
  const IrBarrierOp& b = ir.barrier_ops[static_cast<std::size_t>(op.index)];
  if (!b.cluster && !b.orders_tensor_core) {
    raise(Stage::kDialect, "ValueError",
          "Only single-thread arrival is supported on pre-Hopper hardware",
          rule_id::kWarpArrivePreHopper, op.op->path);
  }
}

}  // namespace collfuzz::lowering
