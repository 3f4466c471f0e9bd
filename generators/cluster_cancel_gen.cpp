#include "generators/cluster_cancel_gen.h"

namespace collfuzz::generators {

void append_cluster_cancel(RunScoped& rs, const ClusterCancelPlan& plan, const AxisEnvironment& env,
                           const std::string& suffix) {
  Alloc result;
  result.name = "cres" + suffix;
  result.kind = AllocKind::kSmem;
  switch (plan.result) {
    case CancelResult::kUint8x16:
      result.shape = {16};
      result.dtype = DType::kUInt8;
      break;
    case CancelResult::kInt8x16:
      result.shape = {16};
      result.dtype = DType::kInt8;
      break;
    case CancelResult::kUint32x4:
      result.shape = {4};
      result.dtype = DType::kUInt32;
      break;
    case CancelResult::kUint8x8:
      result.shape = {8};
      result.dtype = DType::kUInt8;
      break;
    case CancelResult::kRowOfTwo:
      result.shape = {2, 16};
      result.dtype = DType::kInt8;
      break;
  }
  Alloc bar;
  bar.name = "ccbar" + suffix;
  bar.kind = AllocKind::kBarrier;
  bar.num_arrivals = env.num_threads();
  TryClusterCancel tc;
  tc.result = result.name;
  if (plan.result == CancelResult::kRowOfTwo) tc.result_index = {1};
  tc.barrier = BarrierUse{bar.name, 0};
  // plain_cluster() holds the names the mesh declares once; the thread axis is one where no
  // cluster axis shares its name (thread_indexable). Each is named once.
  const bool thread =
      env.thread_name() && env.thread_indexable() &&
      (plan.axes == CancelAxes::kThreadAndCluster || plan.axes == CancelAxes::kThread);
  if (thread) tc.collective_axes.push_back(*env.thread_name());
  for (const NamedAxis& a : env.plain_cluster()) {
    if (plan.axes == CancelAxes::kNone || plan.axes == CancelAxes::kThread) break;
    tc.collective_axes.push_back(a.name.as_plain());
    if (plan.axes == CancelAxes::kFirstClusterAxis) break;
  }
  rs.allocs.push_back(std::move(result));
  rs.allocs.push_back(std::move(bar));
  Op op;
  op.v = std::move(tc);
  rs.body.push_back(std::move(op));
  if (plan.wait) {
    Op wait;
    wait.v = BarrierWait{BarrierUse{"ccbar" + suffix, 0}};
    rs.body.push_back(std::move(wait));
  }
}

}  // namespace collfuzz::generators
