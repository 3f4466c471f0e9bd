// Rule family: barrier_arrive and barrier_wait lowering (spec 1.4, 1.5): a multi-barrier ref must
// be indexed before a single-barrier operation.
#include "oracles/reference/lowering_rules.h"

namespace collfuzz::ref {

void check_barrier_op_lowering(Checker& ck, const Op& op, const BarrierUse& use, bool is_arrive,
                               const Scope& scope) {
  const Alloc* a = scope.allocs.at(use.alloc);
  const bool unindexed_group = !use.index && a->num_barriers != 1;
  if (is_arrive && a->kind == AllocKind::kClusterBarrier) {
    ck.check(RuleId::kLowerClusterArriveNotSingle, unindexed_group, op.path);
    return;
  }
  ck.check(RuleId::kLowerBarrierNotSingle, unindexed_group, op.path, [&] {
    return Holes{{"n", std::to_string(a->num_barriers)}};
  });
}

}  // namespace collfuzz::ref
