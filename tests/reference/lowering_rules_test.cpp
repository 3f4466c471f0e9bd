// Rule families: the resource estimate, run_scoped, copy and barrier lowering, the launch
// context, compile and launch (spec 2.1, 3.3, 3.4).
#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

const json kCluster2 = {{"cluster", {2}}, {"cluster_names", {"x"}}};

json scoped(json axes, json allocs, json body = json::array()) {
  json s = {{"op", "run_scoped"}, {"allocs", allocs}, {"body", body}};
  if (!axes.is_null()) s["collective_axes"] = axes;
  return s;
}

// `with_program(c, {op})`: a braced list of one json is a copy of that json under clang (CWG
// 2137) and an array of one element under GCC; the program is an array either way.
json with_program(json j, json program) {
  j["program"] = program.is_array() ? program : json::array({program});
  return j;
}

TEST(ScopedRules, RealLoweringAcceptsOnlyThreadCollective) {
  const json mesh = {{"cluster", {2, 2}},
                     {"cluster_names", {"c0", "c1"}},
                     {"num_threads", 2},
                     {"thread_name", "t"}};
  const json base = make_case(mesh, kAllocs, json::array());
  // R1: ("t",) is fine.
  EXPECT_EQ(outcome_of(with_program(base, {scoped({"t"}, json::array({smem("s", {128})}))})).kind,
            OutcomeKind::kCompleted);
  // R2: () in a multithreaded kernel.
  expect_rejected(
      with_program(base, {scoped(nullptr, json::array({smem("s", {128})}))}),
      "lower.scoped.multithreaded_needs_collective",
      "Only thread-collective allocations are supported in multithreaded kernels. Hint: add "
      "collective_axes=t to your run_scoped if you intend all threads to share the same allocation "
      "(currently collective_axes=()).");
  // R3, R4, R6, R7, R14: anything else.
  for (const json& axes :
       {json({"c0", "t"}), json({"c0"}), json({"g"}), json({"unknown_axis"}), json({"t", "t"})}) {
    expect_rejected(with_program(base, {scoped(axes, json::array({smem("s", {128})}))}),
                    "lower.scoped.only_thread_collective",
                    "Only thread-collective allocations are supported in run_scoped.");
  }
}

TEST(ScopedRules, Accumulators) {
  const json mesh = {{"num_threads", 2}, {"thread_name", "wg"}};
  const json acc = {{"name", "acc"}, {"kind", "acc"}, {"shape", {64, 64}}, {"dtype", "float32"}};
  // R8 (both orders of the allocations: the accumulator raises after the SMEM is processed).
  expect_rejected(
      with_program(make_case(mesh, kAllocs, json::array()), {scoped({"wg"}, json::array({acc}))}),
      "lower.scoped.acc_collective",
      "WGMMA accumulators can only be allocated non-collectively. Hint: remove collective_axes "
      "from "
      "run_scoped. If other allocations are performed as well, split the run_scoped into two.");
  // R9: non-collective accumulators are fine anywhere.
  EXPECT_EQ(outcome_of(with_program(make_case({}, kAllocs, json::array()),
                                    {scoped(nullptr, json::array({acc}))}))
                .kind,
            OutcomeKind::kCompleted);
  json uacc = acc;
  uacc["dtype"] = "uint32";
  expect_rejected(
      with_program(make_case({}, kAllocs, json::array()), {scoped(nullptr, json::array({uacc}))}),
      "lower.scoped.acc_unsigned",
      "Invalid WGMMA accumulator dtype for s8/i8 WGMMA. Expected signed integer, but got uint32.");
}

TEST(ResourceRules, EstimatorFiresBeforeAnyLoweringRule) {
  // Op 0 has a lowering error; op 1 allocates plain GMEM: the estimate sees op 1 first.
  const json program = {
      scoped({"bad"}, json::array({smem("s", {128})})),
      scoped(
          nullptr,
          json::array({{{"name", "g"}, {"kind", "gmem"}, {"shape", {8}}, {"dtype", "float32"}}}))};
  expect_rejected(with_program(make_case({}, kAllocs, json::array()), program),
                  "estimate.gmem.unsupported", "Unsupported memory space: gmem");
}

TEST(ResourceRules, ClusterBarrierAxesAreResolvedByTheEstimator) {
  const json cb = {{"name", "cb"}, {"kind", "cluster_barrier"}, {"collective_axes", {"y"}}};
  expect_rejected(with_program(make_case({{"cluster", {2, 2}}, {"cluster_names", {"x", "z"}}},
                                         kAllocs, json::array()),
                               {scoped(nullptr, json::array({cb}))}),
                  "estimate.cluster_barrier.unknown_axis",
                  "Unknown cluster axis y, available axes: ['z', 'x']");
  // A tuple entry is a group: its parts are resolved one by one.
  json grouped = cb;
  grouped["collective_axes"] = json::array({json::array({"x", "y"})});
  expect_rejected(
      with_program(
          make_case({{"cluster", {2}}, {"cluster_names", json::array({json::array({"x", "y"})})}},
                    kAllocs, json::array()),
          {scoped(nullptr, json::array({grouped}))}),
      "estimate.cluster_barrier.unknown_axis",
      "Unknown cluster axis x, available axes: [('x', 'y')]");
}

TEST(ResourceRules, SmemCapacityCountsAlignedAllocationsAndBarriers) {
  // 2 x 115 KiB of f32 = 230 KiB + one 8-byte mbarrier > 227 KiB.
  const json big = json::array({smem("a", {29440}), smem("b", {29440}), barrier("bar")});
  expect_rejected(with_program(make_case({}, kAllocs, json::array()), {scoped(nullptr, big)}),
                  "module.smem.capacity",
                  "Mosaic GPU kernel exceeds available shared memory: smem_bytes=235528 > "
                  "max_smem_bytes=232448");
  // Siblings share the space: two 115 KiB scopes side by side fit.
  const json one = json::array({smem("a", {29440})});
  const json two = json::array({smem("b", {29440})});
  EXPECT_EQ(outcome_of(with_program(make_case({}, kAllocs, json::array()),
                                    {scoped(nullptr, one), scoped(nullptr, two)}))
                .kind,
            OutcomeKind::kCompleted);
}

TEST(ResourceRules, BarrierGroupsAndLeaderTrackedClusterBarriers) {
  json many = barrier("many");
  many["num_barriers"] = 33;
  expect_rejected(
      with_program(make_case({}, kAllocs, json::array()), {scoped(nullptr, json::array({many}))}),
      "module.barrier.max_32", "Only up to 32 barriers per group supported");
  const json lt = {{"name", "cb"},
                   {"kind", "cluster_barrier"},
                   {"collective_axes", {"x", "y"}},
                   {"leader_tracked", true}};
  expect_rejected(with_program(make_case({{"cluster", {2, 2}}, {"cluster_names", {"x", "y"}}},
                                         kAllocs, json::array()),
                               {scoped(nullptr, json::array({lt}))}),
                  "module.cluster_barrier.leader_one_dim",
                  "Only leader tracking for a single collective dimension is supported.");
}

TEST(CopyRules, UnknownClusterAxisListsReversedNames) {
  expect_rejected(make_case({{"cluster", {2, 1}}, {"cluster_names", {"x", "y"}}}, kAllocs,
                            json::array({copy({{"collective_axes", {"w"}}})})),
                  "lower.copy.unknown_cluster_axis",
                  "Unknown cluster axis w, available axes: ['y', 'x']");
  // Grid and thread axes are not cluster axes.
  expect_rejected(
      make_case({{"grid", {4}}, {"grid_names", {"g"}}, {"cluster", {2}}, {"cluster_names", {"x"}}},
                kAllocs, json::array({copy({{"collective_axes", {"g"}}})})),
      "lower.copy.unknown_cluster_axis", "Unknown cluster axis g, available axes: ['x']");
}

TEST(CopyRules, IntegerBytesPrintsMlirShapeAndType) {
  expect_rejected(make_case({}, json::array({smem("dst", {3}, "int4"), barrier("bar")}),
                            json::array({copy()}), {3}, "int4"),
                  "lower.copy.integer_bytes",
                  "Can only transfer integer bytes (shape=[3], dtype=i4)");
}

TEST(CopyRules, LeaderTrackedNeedsOneAxisAndTwoCtas) {
  expect_rejected(
      make_case(
          {{"cluster", {2, 1}}, {"cluster_names", {"x", "y"}}}, kAllocs,
          json::array({copy({{"collective_axes", {"x", "y"}}, {"leader_tracked", "replicated"}})})),
      "copy.leader_tracked.one_axis",
      "Expected exactly one collective axis, got collective_axes=('x', 'y')");
  expect_rejected(
      make_case(
          {{"cluster", {4}}, {"cluster_names", {"x"}}}, kAllocs,
          json::array({copy({{"collective_axes", {"x"}}, {"leader_tracked", "replicated"}})})),
      "copy.leader_tracked.cluster_size_2",
      "Partitioned loads only supported for clusters of size 2. Got cluster size (4, 1, 1).");
}

TEST(CopyRules, LaneBytesDivisibleBy128AfterDoubling) {
  expect_rejected(
      make_case({}, json::array({smem("dst", {16}), barrier("bar")}), json::array({copy()}), {16}),
      "lower.lane.bytes_multiple_of_128",
      "Only copies transferring a number of bytes divisible by the warpgroup size are supported. "
      "Got "
      "bytes=64 but warpgroup size is 128");
  // Warpgroup semantics have no such rule (a single lane arms the bytes).
  EXPECT_EQ(
      outcome_of(make_case({}, json::array({smem("dst", {16}), barrier("bar")}),
                           json::array({copy(), wait()}), {16}, "float32", "sm_90a", "warpgroup"))
          .kind,
      OutcomeKind::kCompleted);
}

TEST(CopyRules, PreHopperPath) {
  const json allocs = json::array({smem("dst", {128, 64}), barrier("bar")});
  expect_rejected(
      make_case({}, allocs, json::array({copy()}), {128, 64}, "float32", "sm_80"),
      "lower.cp_async.barrier",
      "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, which use the TMA "
      "implementation");
  json no_barrier = copy({{"collective_axes", json::array()}});
  no_barrier.erase("barrier");
  expect_rejected(make_case({}, allocs, json::array({no_barrier}), {128, 64}, "float32", "sm_80"),
                  "lower.cp_async.collective",
                  "Only the TMA implementation supports collective copies");
  no_barrier.erase("collective_axes");
  expect_rejected(
      make_case({}, allocs, json::array({no_barrier}), {128, 64}, "float32", "sm_80"),
      "lower.cp_async.oob_mode",
      "The cp.async implementation only supports oob_mode=OOBFillMode.PROMISE_IN_BOUNDS");
  no_barrier["oob_mode"] = "promise_in_bounds";
  EXPECT_EQ(
      outcome_of(make_case({}, allocs, json::array({no_barrier}), {128, 64}, "float32", "sm_80"))
          .kind,
      OutcomeKind::kCompleted);
  expect_rejected(make_case({}, allocs, json::array({no_barrier}), {128, 64}, "float32", "sm_90a"),
                  "lower.tma.no_barrier",
                  "copy_gmem_to_smem without a barrier is only supported on pre-Hopper GPUs, which "
                  "use the cp.async "
                  "implementation");
}

TEST(BarrierRules, MultiBarrierRefsNeedAnIndex) {
  json bars = barrier("bar");
  bars["num_barriers"] = 2;
  expect_rejected(make_case({}, json::array({smem("dst", {128, 64}), bars}), json::array({wait()})),
                  "lower.barrier.not_single",
                  "Operation is only valid for a single barrier, but barrier ref contains 2. "
                  "Individual barriers can "
                  "be accessed by indexing into the ref.");
}

TEST(LaunchContextRules, MulticastSplitAndItsMessage) {
  // Cluster (2,): dst f32[3, 64] has no dim divisible by 2.
  expect_rejected(
      make_case(kCluster2, json::array({smem("dst", {3, 64}), barrier("bar")}),
                json::array({copy({{"collective_axes", "x"}})}), {3, 64}),
      "launch_context.multicast.no_divisible_dim",
      "None of the leading dimensions in the transformed slice shape [3, 64] is divisible by the "
      "collective size 2");
}

TEST(LaunchContextRules, LaneRaisesInLowerWarpgroupInDialect) {
  // f32 [128, 2]: the minor dim is 8 bytes, not 16.
  const json allocs = json::array({smem("dst", {128, 2}), barrier("bar")});
  const Outcome lane = outcome_of(make_case({}, allocs, json::array({copy()}), {128, 2}));
  ASSERT_EQ(lane.kind, OutcomeKind::kRejected);
  EXPECT_EQ(lane.diagnostic->rule, "launch_context.gmem_strides_16b");
  EXPECT_EQ(lane.diagnostic->stage, "lower");
  const Outcome wg = outcome_of(
      make_case({}, allocs, json::array({copy()}), {128, 2}, "float32", "sm_90a", "warpgroup"));
  ASSERT_EQ(wg.kind, OutcomeKind::kRejected);
  EXPECT_EQ(wg.diagnostic->stage, "dialect");
}

TEST(LaunchContextRules, BoxLimitOnTheTensorPathOnly) {
  const json allocs = json::array({smem("dst", {512, 4}), barrier("bar")});
  expect_rejected(
      make_case({}, allocs, json::array({copy()}), {512, 4}), "launch_context.box_max_256",
      "Async copies only support copying <=256 elements along each dimension, got (512, 4)");
  // The bulk path (contiguous, not collective, oob_mode not ZEROS) has no box limit.
  EXPECT_EQ(
      outcome_of(
          make_case({}, allocs, json::array({copy({{"oob_mode", "undefined"}}), wait()}), {512, 4}))
          .kind,
      OutcomeKind::kCompleted);
}

TEST(LaunchRules, ClusterSizeAbortsAtLaunch) {
  expect_rejected(
      make_case({{"cluster", {4, 8}}, {"cluster_names", {"a", "b"}}}, kAllocs, json::array()),
      "launch.cluster_size",
      "cuLaunchKernel failed with invalid cluster size (8, 4, 1): maximum is 16");
}

}  // namespace
}  // namespace collfuzz::testing
