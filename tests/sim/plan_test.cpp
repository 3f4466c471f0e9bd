// What each Pallas thread does, per the plan: arrive.expect_tx as Lane and Warpgroup semantics
// issue it, leader-only arming, parity waits, block-wide syncs, guards and predicates.
#include <gtest/gtest.h>

#include "harness/lowering/plan_json.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz::lowering {
namespace {

using simtest::make_case;

std::string copy_and_wait(const std::string& input_shape, const std::string& extra) {
  return R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": )" +
         input_shape +
         R"(, "dtype": "float32"}, {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"})" +
         extra + R"(}, {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])";
}

std::string input(const std::string& shape) {
  return R"([{"name": "x", "shape": )" + shape + R"(, "dtype": "float32"}])";
}

std::vector<StepKind> kinds(const Plan& p, std::size_t thread) {
  std::vector<StepKind> out;
  const ThreadProgram& t = p.threads[thread];
  for (std::int64_t k = 0; k < t.num_steps; ++k)
    out.push_back(p.steps[static_cast<std::size_t>(t.first_step + k)].kind);
  return out;
}

TEST(Plan, WarpgroupSpreadsDivisibleBytesOverLanes) {
  const Plan p = simtest::lower_ok(
      make_case("{}", simtest::kWarpgroup, input("[128, 64]"), copy_and_wait("[128, 64]", "")));
  ASSERT_EQ(p.arrives.size(), 1u);
  EXPECT_EQ(p.arrives[0].lanes, 128);
  EXPECT_EQ(p.arrives[0].tx_lane0, 256);
  EXPECT_EQ(p.arrives[0].tx_other, 256);
}

TEST(Plan, WarpgroupGivesIndivisibleBytesToOneLane) {
  // 16 f32 = 64 bytes: Lane semantics refuse it; Warpgroup arms them from a single lane, while all
  // 128 lanes still arrive.
  const Plan p = simtest::lower_ok(
      make_case("{}", simtest::kWarpgroup, input("[16]"), copy_and_wait("[16]", "")));
  ASSERT_EQ(p.arrives.size(), 1u);
  EXPECT_EQ(p.arrives[0].lanes, 128);
  EXPECT_EQ(p.arrives[0].tx_lane0, 64);
  EXPECT_EQ(p.arrives[0].tx_other, 0);
}

TEST(Plan, PredicateSelectsZeroBytesButKeepsTheArrival) {
  const std::string extra = R"(, "predicate": {"axis": "x", "eq": 0})";
  const Plan lane =
      simtest::lower_ok(make_case(R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane,
                                  input("[128, 64]"), copy_and_wait("[128, 64]", extra)));
  ASSERT_EQ(lane.arrives.size(), 2u);
  EXPECT_EQ(lane.arrives[0].tx_other, 256);
  EXPECT_EQ(lane.arrives[1].tx_lane0, 0);
  EXPECT_EQ(lane.arrives[1].tx_other, 0);
  EXPECT_EQ(lane.arrives[1].lanes, 128);
  EXPECT_TRUE(lane.loads[0].predicate);
  EXPECT_FALSE(lane.loads[1].predicate);
  // Warpgroup: select(pred, bytes, 0) is not a constant, so one lane carries it.
  const Plan wg = simtest::lower_ok(make_case(R"({"cluster": [2], "cluster_names": ["x"]})",
                                              simtest::kWarpgroup, input("[128, 64]"),
                                              copy_and_wait("[128, 64]", extra)));
  EXPECT_EQ(wg.arrives[0].tx_lane0, 32768);
  EXPECT_EQ(wg.arrives[0].tx_other, 0);
  EXPECT_EQ(wg.arrives[1].tx_lane0, 0);
}

TEST(Plan, LeaderTrackedCopyArmsOnlyTheLeader) {
  const Plan p = simtest::lower_ok(make_case(
      R"({"cluster": [2], "cluster_names": ["x"]})", R"({"arch": "sm_100a", "semantics": "lane"})",
      input("[256, 64]"),
      copy_and_wait("[128, 64]",
                    R"(, "collective_axes": "x", "leader_tracked": {"partitioned": 0})")));
  EXPECT_EQ(kinds(p, 0),
            (std::vector<StepKind>{StepKind::kScopeEnter, StepKind::kArrive, StepKind::kLoad,
                                   StepKind::kWait, StepKind::kScopeExit}));
  EXPECT_EQ(kinds(p, 1), (std::vector<StepKind>{StepKind::kScopeEnter, StepKind::kLoad,
                                                StepKind::kWait, StepKind::kScopeExit}));
}

TEST(Plan, ParitiesFollowEachThreadsWaits) {
  const Plan p = simtest::lower_ok(
      make_case("{}", simtest::kLane, input("[128, 64]"), R"([{"op": "run_scoped", "allocs": [
      {"name": "b", "kind": "barrier"}], "body": [
      {"op": "barrier_arrive", "barrier": {"alloc": "b"}}, {"op": "barrier_wait", "barrier": {"alloc": "b"}},
      {"op": "barrier_arrive", "barrier": {"alloc": "b"}}, {"op": "barrier_wait", "barrier": {"alloc": "b"}},
      {"op": "barrier_arrive", "barrier": {"alloc": "b"}}, {"op": "barrier_wait", "barrier": {"alloc": "b"}}]}])"));
  ASSERT_EQ(p.waits.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(p.waits[k].phase, static_cast<std::int64_t>(k));
}

TEST(Plan, ThreadCollectiveScopesSyncTheBlockAndGuardsAreEvaluatedPerThread) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"num_threads": 2, "thread_name": "wg"})", simtest::kLane, input("[128, 64]"),
                R"([{"op": "run_scoped", "collective_axes": "wg", "allocs": [
      {"name": "b", "kind": "barrier"}], "body": [
      {"op": "when", "cond": {"axis": "wg", "eq": 1}, "body": [{"op": "barrier_arrive", "barrier": {"alloc": "b"}}]},
      {"op": "barrier_wait", "barrier": {"alloc": "b"}}]}])"));
  ASSERT_EQ(p.threads.size(), 2u);
  // The kernel's own run_scoped syncs first (unrecorded), then the thread-collective one.
  EXPECT_EQ(kinds(p, 0),
            (std::vector<StepKind>{StepKind::kBlockSync, StepKind::kBlockSync,
                                   StepKind::kScopeEnter, StepKind::kWait, StepKind::kScopeExit}));
  EXPECT_EQ(kinds(p, 1), (std::vector<StepKind>{StepKind::kBlockSync, StepKind::kBlockSync,
                                                StepKind::kScopeEnter, StepKind::kArrive,
                                                StepKind::kWait, StepKind::kScopeExit}));
  EXPECT_FALSE(p.block_syncs[0].recorded);
  EXPECT_TRUE(p.block_syncs[1].recorded);
}

TEST(Plan, ClusterBarrierArrivalsGoToTheMask) {
  const Plan p = simtest::lower_ok(make_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})",
                                             simtest::kLane, input("[128, 64]"),
                                             R"([{"op": "run_scoped", "allocs": [
      {"name": "cb", "kind": "cluster_barrier", "collective_axes": ["a"]}], "body": [
      {"op": "barrier_arrive", "barrier": {"alloc": "cb"}}]}])"));
  ASSERT_EQ(p.remote_arrives.size(), 4u);
  for (std::int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(p.remote_arrives[static_cast<std::size_t>(r)].mask, 0b0101u << (r % 2));
}

TEST(Plan, JsonViewNamesEveryStep) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane, input("[128, 64]"),
                copy_and_wait("[128, 64]", R"(, "collective_axes": "x")")));
  const nlohmann::json j = plan_to_json(p);
  ASSERT_EQ(j["threads"].size(), 2u);
  EXPECT_EQ(j["threads"][1]["steps"][2]["step"], "load");
  EXPECT_EQ(j["threads"][1]["steps"][2]["coords"], nlohmann::json::array({64, 0}));
  EXPECT_EQ(j["threads"][1]["steps"][2]["multicast_mask"], 3);
}

}  // namespace
}  // namespace collfuzz::lowering
