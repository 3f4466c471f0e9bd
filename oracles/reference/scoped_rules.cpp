// Rule family: the real compiler's run_scoped lowering rule (spec 2.1). The estimate ran first,
// so ClusterBarrier axes, TMEM ranks, semaphore scopes and plain GMEM are already settled.
#include "harness/core/pyrepr.h"
#include "oracles/reference/lowering_rules.h"

namespace collfuzz::ref {

void check_scoped_lowering(Checker& ck, const Op& op, const RunScoped& rs) {
  const std::string* wg = ck.mesh.thread_name();
  const bool thread_collective =
      wg && rs.collective_axes.size() == 1 && rs.collective_axes[0] == AxisName::plain(*wg);
  ck.check(RuleId::kLowerScopedOnlyThread, !rs.collective_axes.empty() && !thread_collective,
           op.path);
  for (const Alloc& a : rs.allocs) {
    if (a.kind == AllocKind::kAcc) {
      ck.check(RuleId::kLowerScopedAccCollective, !rs.collective_axes.empty(), op.path);
      const DTypeInfo& info = dtype_info(a.dtype);
      ck.check(RuleId::kLowerScopedAccUnsigned, !info.is_float && !info.is_signed, op.path, [&] {
        return Holes{{"dtype", std::string(info.name)}};
      });
      continue;
    }
    if (a.kind == AllocKind::kSemaphore) continue;
    ck.check(RuleId::kLowerScopedMultithreaded, wg && !thread_collective, op.path, [&] {
      return Holes{{"wg", *wg}, {"axes", py::tuple_of_names(rs.collective_axes)}};
    });
  }
}

}  // namespace collfuzz::ref
