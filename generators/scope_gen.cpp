#include "generators/scope_gen.h"

#include "generators/copy_gen.h"
#include "generators/weighted.h"

namespace collfuzz::generators {
namespace {

rc::Gen<ScopeAxes> scope_axes() {
  return weighted_element<ScopeAxes>({{84, ScopeAxes::kValid},
                                      {4, ScopeAxes::kEmpty},
                                      {2, ScopeAxes::kCluster},
                                      {2, ScopeAxes::kClusterAndThread},
                                      {2, ScopeAxes::kGrid},
                                      {2, ScopeAxes::kUnknown},
                                      {2, ScopeAxes::kThreadTwice},
                                      {2, ScopeAxes::kThread}});
}

rc::Gen<WaitChoice> wait_choice() {
  return weighted_element<WaitChoice>({{76, WaitChoice::kAll},
                                       {10, WaitChoice::kLeaderOnly},
                                       {9, WaitChoice::kNone},
                                       {5, WaitChoice::kTwice}});
}

rc::Gen<NdLoopPlan> nd_loop_plan() {
  return rc::gen::build<NdLoopPlan>(
      rc::gen::set(&NdLoopPlan::extra_steps,
                   weighted_element<std::int64_t>({{65, 0}, {30, 1}, {5, 2}})),
      rc::gen::set(&NdLoopPlan::tiling, weighted_element<NdTiling>({{70, NdTiling::kNone},
                                                                    {20, NdTiling::kDividing},
                                                                    {5, NdTiling::kWrongRank},
                                                                    {5, NdTiling::kNotDividing}})),
      rc::gen::set(&NdLoopPlan::axes_tuple, chance(20)),
      rc::gen::set(&NdLoopPlan::two_dims, chance(40)));
}

rc::Gen<ClusterSyncPlan> cluster_sync() {
  return rc::gen::build<ClusterSyncPlan>(
      rc::gen::set(&ClusterSyncPlan::axes,
                   weighted_element<ClusterBarrierAxes>({{53, ClusterBarrierAxes::kAll},
                                                         {20, ClusterBarrierAxes::kFirst},
                                                         {10, ClusterBarrierAxes::kGrouped},
                                                         {5, ClusterBarrierAxes::kUnknown},
                                                         {4, ClusterBarrierAxes::kThread},
                                                         {8, ClusterBarrierAxes::kReversed}})),
      rc::gen::set(&ClusterSyncPlan::leader_tracked, chance(12)),
      rc::gen::set(&ClusterSyncPlan::num_arrivals,
                   weighted_element<std::int64_t>({{90, 1}, {6, 2}, {4, 0}})),
      rc::gen::set(&ClusterSyncPlan::num_barriers,
                   weighted_element<std::int64_t>({{80, 1}, {20, 2}})),
      rc::gen::set(&ClusterSyncPlan::unindexed, chance(10)),
      rc::gen::set(&ClusterSyncPlan::zero_d, chance(35)),
      rc::gen::set(&ClusterSyncPlan::arrive_in_warp, chance(4)),
      rc::gen::set(&ClusterSyncPlan::orders_tensor_core, chance(2)),
      rc::gen::set(&ClusterSyncPlan::wait, wait_choice()),
      rc::gen::set(&ClusterSyncPlan::arrive_and_wait, chance(3)));
}

rc::Gen<ClusterCancelPlan> cluster_cancel() {
  return rc::gen::build<ClusterCancelPlan>(
      rc::gen::set(&ClusterCancelPlan::result,
                   weighted_element<CancelResult>({{60, CancelResult::kUint8x16},
                                                   {10, CancelResult::kRowOfTwo},
                                                   {10, CancelResult::kInt8x16},
                                                   {12, CancelResult::kUint32x4},
                                                   {8, CancelResult::kUint8x8}})),
      rc::gen::set(&ClusterCancelPlan::axes,
                   weighted_element<CancelAxes>({{55, CancelAxes::kCluster},
                                                 {15, CancelAxes::kThreadAndCluster},
                                                 {15, CancelAxes::kNone},
                                                 {10, CancelAxes::kFirstClusterAxis},
                                                 {5, CancelAxes::kThread}})),
      rc::gen::set(&ClusterCancelPlan::wait, chance(90)));
}

ExtraAlloc extra(AllocKind kind, Shape shape, DType dtype) {
  ExtraAlloc e;
  e.kind = kind;
  e.shape = std::move(shape);
  e.dtype = dtype;
  return e;
}

rc::Gen<VectorBackPlan> vector_back() {
  return rc::gen::build<VectorBackPlan>(
      rc::gen::set(&VectorBackPlan::kind,
                   weighted_element<VectorBackKind>({{45, VectorBackKind::kReplace},
                                                     {15, VectorBackKind::kAfter},
                                                     {40, VectorBackKind::kInPlace}})),
      rc::gen::set(&VectorBackPlan::fence, weighted_element<SmemFence>({{70, SmemFence::kStoreOwn},
                                                                        {15, SmemFence::kExplicit},
                                                                        {15, SmemFence::kNone}})),
      rc::gen::set(&VectorBackPlan::value,
                   weighted_element<VectorValueShape>({{20, VectorValueShape::kLoad},
                                                       {25, VectorValueShape::kAddConst},
                                                       {10, VectorValueShape::kSquare},
                                                       {10, VectorValueShape::kChain},
                                                       {15, VectorValueShape::kConst},
                                                       {10, VectorValueShape::kMinConst},
                                                       {10, VectorValueShape::kMaxOfDiff},
                                                       {10, VectorValueShape::kRoundTrip},
                                                       {8, VectorValueShape::kMixedWidth},
                                                       {10, VectorValueShape::kBitwise},
                                                       {8, VectorValueShape::kShift},
                                                       {6, VectorValueShape::kShiftByTile},
                                                       {8, VectorValueShape::kIota},
                                                       {5, VectorValueShape::kIotaUncast},
                                                       {8, VectorValueShape::kBroadcast},
                                                       {10, VectorValueShape::kBroadcastInner},
                                                       {12, VectorValueShape::kBroadcastOne},
                                                       {10, VectorValueShape::kCarried}})),
      rc::gen::set(&VectorBackPlan::constant, rc::gen::inRange<std::int64_t>(1, 4)),
      rc::gen::set(&VectorBackPlan::uneven, chance(30)),
      rc::gen::set(&VectorBackPlan::carry_nd, chance(30)),
      rc::gen::set(&VectorBackPlan::peer,
                   weighted_element<std::int64_t>({{65, 0}, {20, 1}, {15, 2}})));
}

rc::Gen<ExtraAlloc> extra_alloc() {
  const auto tmem = rc::gen::map(
      rc::gen::tuple(weighted_element<Shape>(
                         {{65, {128, 64}}, {12, {128}}, {12, {2, 128, 64}}, {11, {32, 64}}}),
                     weighted_element<DType>({{80, DType::kFloat32}, {20, DType::kBFloat16}}),
                     chance(30)),
      [](const std::tuple<Shape, DType, bool>& t) {
        ExtraAlloc e = extra(AllocKind::kTmem, std::get<0>(t), std::get<1>(t));
        e.collective = std::get<2>(t);
        return e;
      });
  // Two TMEM allocations, one collective and one not (module.tmem.mixed).
  ExtraAlloc tmem_pair = extra(AllocKind::kTmem, {128, 64}, DType::kFloat32);
  tmem_pair.paired = true;
  // A quarter of them scalar: shape (), SemaphoreType.REGULAR's default.
  const auto semaphore =
      rc::gen::map(rc::gen::tuple(chance(50), chance(25)), [](const std::tuple<bool, bool>& t) {
        ExtraAlloc e =
            extra(AllocKind::kSemaphore, std::get<1>(t) ? Shape{} : Shape{1}, DType::kInt32);
        e.semaphore = std::get<0>(t) ? SemaphoreKind::kBarrier : SemaphoreKind::kRegular;
        return e;
      });
  ExtraAlloc many_barriers = extra(AllocKind::kBarrier, {}, DType::kFloat32);
  many_barriers.num_barriers = 33;
  const auto kind = weighted_one_of<ExtraAlloc>(
      {{25, rc::gen::just(extra(AllocKind::kAcc, {64, 64}, DType::kFloat32))},
       {8, rc::gen::map(weighted_element<DType>(
                            {{50, DType::kInt32}, {30, DType::kUInt32}, {20, DType::kUInt8}}),
                        [](DType d) {
                          return extra(AllocKind::kAcc, {64, 64}, d);
                        })},
       {20, tmem},
       {4, rc::gen::just(tmem_pair)},
       {10, rc::gen::just(extra(AllocKind::kGmem, {8}, DType::kFloat32))},
       {10, semaphore},
       {8, rc::gen::just(extra(AllocKind::kSmem, {256, 256}, DType::kFloat32))},
       {6, rc::gen::just(many_barriers)},
       {8, rc::gen::just(extra(AllocKind::kSmem, {16}, DType::kFloat32))}});
  return rc::gen::map(rc::gen::tuple(kind, chance(50), chance(15), scope_axes()),
                      [](const std::tuple<ExtraAlloc, bool, bool, ScopeAxes>& t) {
                        ExtraAlloc e = std::get<0>(t);
                        const ScopeAxes axes = std::get<3>(t);
                        if (e.kind == AllocKind::kAcc) {
                          // Accumulators are allocated non-collectively, on their own: mostly
                          // in a scope of their own with ().
                          e.own_scope = !std::get<2>(t);
                          e.own_scope_axes = axes == ScopeAxes::kValid ? ScopeAxes::kEmpty : axes;
                        } else {
                          e.own_scope = std::get<1>(t);
                          e.own_scope_axes = axes;
                        }
                        return e;
                      });
}

}  // namespace

rc::Gen<ScopePlan> scope(int depth) {
  const auto nested = depth > 0 ? several<ScopePlan>({{88, 0}, {12, 1}}, scope(depth - 1))
                                : rc::gen::just(std::vector<ScopePlan>());
  return rc::gen::build<ScopePlan>(
      rc::gen::set(&ScopePlan::axes, scope_axes()),
      rc::gen::set(&ScopePlan::issuers, weighted_element<Issuers>({{55, Issuers::kAllThreads},
                                                                   {45, Issuers::kThreadZero}})),
      rc::gen::set(&ScopePlan::schedule,
                   weighted_element<Schedule>({{80, Schedule::kBatch},
                                               {8, Schedule::kPhased},
                                               {4, Schedule::kCopyWaitCopy},
                                               {3, Schedule::kMissedPhase},
                                               {3, Schedule::kWaitLate},
                                               {2, Schedule::kTwoBeforeAWait}})),
      rc::gen::set(&ScopePlan::copies,
                   several<CopyPlan>({{4, 0}, {60, 1}, {26, 2}, {10, 3}}, copy())),
      rc::gen::set(&ScopePlan::extra_arrivals,
                   weighted_element<std::int64_t>({{85, 0}, {10, 1}, {5, 2}})),
      rc::gen::set(&ScopePlan::arrival_fault,
                   weighted_element<ArrivalFault>({{90, ArrivalFault::kNone},
                                                   {3, ArrivalFault::kOneMore},
                                                   {4, ArrivalFault::kOneFewer},
                                                   {2, ArrivalFault::kZero},
                                                   {1, ArrivalFault::kNegative}})),
      rc::gen::set(&ScopePlan::num_barriers,
                   weighted_element<std::int64_t>({{90, 1}, {5, 2}, {2, 4}, {2, 33}, {1, 40}})),
      rc::gen::set(&ScopePlan::zero_d, chance(35)),
      rc::gen::set(&ScopePlan::warp_issue,
                   weighted_element<WarpIssue>({{82, WarpIssue::kWarpgroup},
                                                {12, WarpIssue::kOneWarp},
                                                {4, WarpIssue::kEveryWarp},
                                                {1, WarpIssue::kNested},
                                                {1, WarpIssue::kScopedInside},
                                                {2, WarpIssue::kEveryWarpCountedOnce}})),
      rc::gen::set(&ScopePlan::orders_tensor_core, chance(3)),
      rc::gen::set(&ScopePlan::wait, wait_choice()),
      rc::gen::set(&ScopePlan::write_back, chance(15)),
      rc::gen::set(&ScopePlan::write_back_predicate, sometimes(10, cond_choice())),
      rc::gen::set(&ScopePlan::store_sync,
                   weighted_element<StoreSync>({{66, StoreSync::kIdiom},
                                                {9, StoreSync::kWaitZero},
                                                {8, StoreSync::kWaitOne},
                                                {5, StoreSync::kNoWait},
                                                {7, StoreSync::kCommitLater},
                                                {4, StoreSync::kNeverCommitted},
                                                {1, StoreSync::kNegativeWait}})),
      rc::gen::set(&ScopePlan::store_wait_read_only, chance(50)),
      rc::gen::set(&ScopePlan::vector_back, sometimes(50, vector_back())),
      rc::gen::set(&ScopePlan::reduce_back,
                   sometimes(15, weighted_element<ReductionOp>({{50, ReductionOp::kAdd},
                                                                {5, ReductionOp::kMin},
                                                                {4, ReductionOp::kMax},
                                                                {6, ReductionOp::kInc},
                                                                {4, ReductionOp::kDec},
                                                                {3, ReductionOp::kAnd},
                                                                {3, ReductionOp::kOr},
                                                                {3, ReductionOp::kXor},
                                                                {3, ReductionOp::kUmin},
                                                                {8, ReductionOp::kUmax},
                                                                {8, ReductionOp::kSmin},
                                                                {3, ReductionOp::kSmax}}))),
      rc::gen::set(&ScopePlan::loop_trips,
                   weighted_element<std::int64_t>({{90, 0}, {6, 2}, {4, 3}})),
      rc::gen::set(&ScopePlan::loop_indexed, chance(60)),
      rc::gen::set(&ScopePlan::loop_slots, chance(50)),
      rc::gen::set(&ScopePlan::nd_loop, sometimes(35, nd_loop_plan())),
      rc::gen::set(&ScopePlan::cluster_sync, sometimes(20, cluster_sync())),
      rc::gen::set(&ScopePlan::cluster_cancel, sometimes(6, cluster_cancel())),
      rc::gen::set(&ScopePlan::extras,
                   several<ExtraAlloc>({{78, 0}, {18, 1}, {4, 2}}, extra_alloc())),
      rc::gen::set(&ScopePlan::nested, nested));
}

rc::Gen<ProgramPlan> program() {
  return rc::gen::build<ProgramPlan>(
      rc::gen::set(&ProgramPlan::scopes, several<ScopePlan>({{80, 1}, {15, 2}, {5, 3}}, scope(1))));
}

}  // namespace collfuzz::generators
