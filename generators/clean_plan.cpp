#include "generators/clean_plan.h"

namespace collfuzz::generators {

Target clean_target(Target t) {
  // Before Hopper only the cp.async copy exists and clusters do not: a clean sm_80 case gets a
  // cluster of one CTA (any_case) and cp.async copies (program_builder).
  t.entry = Entry::kKernel;
  return t;
}

CopyPlan clean_copy(CopyPlan p) {
  switch (p.axes.copy) {
    case CopyAxes::kAbsent:
    case CopyAxes::kOne:
    case CopyAxes::kAll:
    case CopyAxes::kSubset:
    case CopyAxes::kReversed:
      break;
    default:
      p.axes.copy = CopyAxes::kOne;
  }
  p.axes.leader = LeaderAxes::kSizeTwo;
  if (p.shape.rank > 5) p.shape.rank = 5;
  p.shape.lead.kind = DimChoice::Kind::kAligned;
  p.shape.minor.kind = DimChoice::Kind::kAligned;
  p.src_dtype.reset();
  if (p.partition_axis != PartitionAxis::kLast) p.partition_axis = PartitionAxis::kFirst;
  p.src_fault = SrcShapeFault::kNone;
  p.guard.reset();
  p.barrier = BarrierChoice::kIndexed;
  // The compiler refuses a transpose that moves the last dim; plgpu.transpose_ref trips over an
  // untransformed ref.
  if (p.transpose != TransposeChoice::kNone) p.transpose = TransposeChoice::kLeading;
  p.transpose_ref = false;
  return p;
}

ScopePlan clean_scope(ScopePlan p) {
  p.axes = ScopeAxes::kValid;
  if (p.schedule != Schedule::kPhased) p.schedule = Schedule::kBatch;
  for (auto& c : p.copies) c = clean_copy(std::move(c));
  p.arrival_fault = ArrivalFault::kNone;
  p.num_barriers = 1;
  p.orders_tensor_core = false;
  if (p.warp_issue == WarpIssue::kNested || p.warp_issue == WarpIssue::kScopedInside)
    p.warp_issue = WarpIssue::kOneWarp;
  if (p.warp_issue == WarpIssue::kEveryWarpCountedOnce) p.warp_issue = WarpIssue::kEveryWarp;
  if (p.cluster_sync) {
    ClusterSyncPlan& cs = *p.cluster_sync;
    if (cs.axes != ClusterBarrierAxes::kFirst && cs.axes != ClusterBarrierAxes::kReversed)
      cs.axes = ClusterBarrierAxes::kAll;
    cs.leader_tracked = false;
    cs.num_arrivals = std::max<std::int64_t>(1, cs.num_arrivals);
    cs.num_barriers = 1;
    cs.unindexed = false;
    cs.orders_tensor_core = false;
    cs.arrive_in_warp = false;
  }
  if (p.cluster_cancel) {
    p.cluster_cancel->result = CancelResult::kUint8x16;
    if (p.cluster_cancel->axes != CancelAxes::kThreadAndCluster)
      p.cluster_cancel->axes = CancelAxes::kCluster;
    p.cluster_cancel->wait = true;
  }
  // Accumulators alone in a scope of their own are the only other allocations JAX accepts
  // everywhere; keep those.
  std::erase_if(p.extras,
                [](const ExtraAlloc& e) { return e.kind != AllocKind::kAcc || !e.own_scope; });
  for (auto& e : p.extras) {
    e.dtype = DType::kFloat32;
    e.own_scope_axes = ScopeAxes::kEmpty;
  }
  for (auto& n : p.nested) n = clean_scope(std::move(n));
  return p;
}

}  // namespace collfuzz::generators
