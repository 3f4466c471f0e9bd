// The lower stage: every op's lowering rule, in program order.
#include "oracles/reference/lowering_rules.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_lowering(Checker& ck) {
  CarryLayouts carries;
  walk_program(
      ck.c.program,
      [&](const Op& op, const Scope& scope) {
        check_loop_carry_lowering(ck, op, scope, Stage::kLower, false, carries);
        check_warp_context_lowering(ck, op, scope);
        if (const auto* rs = std::get_if<RunScoped>(&op.v)) check_scoped_lowering(ck, op, *rs);
        if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v))
          check_copy_lowering(ck, op, *cp, scope);
        // _barrier_arrive_and_wait_lowering: the arrive's lowering, then the wait's.
        if (const BarrierUse* arrival = arrival_barrier(op))
          check_barrier_op_lowering(ck, op, *arrival, true, scope);
        if (const auto* tc = std::get_if<TryClusterCancel>(&op.v))
          check_try_cluster_cancel_lowering(ck, op, *tc, scope);
        if (const auto* wt = std::get_if<BarrierWait>(&op.v))
          check_barrier_op_lowering(ck, op, wt->barrier, false, scope);
        // Under Warpgroup only an iota's layout cast is built here (the rest in the dialect).
        if (const auto* vs = std::get_if<VectorStore>(&op.v))
          check_vector_store_lowering(ck, op, *vs, scope, Stage::kLower, carries);
        // copy_smem_to_gmem: under Lane semantics LaunchContext.async_copy runs in its lowering
        // rule.
        if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
          check_smem_slice_tiles(ck, op, *scope.allocs.at(st->src), st->src_index.size(),
                                 st->src_slice);
          if (ck.lane())
            check_store_launch_context(ck, store_facts(op, *st, ck.c, scope), Stage::kLower);
        }
      },
      [&](const Op& op, const Scope& scope) {
        check_loop_carry_lowering(ck, op, scope, Stage::kLower, true, carries);
      });
}

}  // namespace collfuzz::ref
