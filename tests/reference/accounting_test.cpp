// Byte accounting and data placement for every copy mode (spec 3.5, the worked examples of 3.6),
// and the predicted deadlocks.
#include "harness/core/fill.h"
#include "harness/core/outcome_json.h"
#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

std::string outcome_to_json_for_test(const Outcome& o) { return outcome_to_json(o).dump(); }

const json kMeshX2Y1 = {{"cluster", {2, 1}}, {"cluster_names", {"x", "y"}}};

// Element (row, col) of x, for a `cols`-wide f32 input with the iota fill.
std::uint64_t x_at(std::int64_t row, std::int64_t col, std::int64_t cols) {
  ArraySpec a;
  a.shape = {1 << 20};
  a.dtype = DType::kFloat32;
  return fill_element_bits(a, row * cols + col);
}

std::uint64_t dst_at(const Outcome& o, std::int64_t rank, std::int64_t row, std::int64_t col,
                     std::int64_t cols = 64) {
  return load_element(o.ctas.at(static_cast<std::size_t>(rank)).buffers.at(0).bytes,
                      DType::kFloat32, row * cols + col);
}

TEST(Accounting, PlainCopyArmsAndReceivesItsOwnBytes) {
  const Outcome o = outcome_of(make_case(kMeshX2Y1, kAllocs, json::array({copy(), wait()})));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (int r = 0; r < 2; ++r) {
    const auto& b = barrier_of(o, r, "bar");
    EXPECT_EQ(*b.armed, 32768);
    EXPECT_EQ(*b.received, 32768);
    EXPECT_EQ(*b.arrivals, 1);
    EXPECT_EQ(*b.phases, 1);
    EXPECT_EQ(dst_at(o, r, 127, 63), x_at(127, 63, 64));
  }
}

TEST(Accounting, MulticastSplitsRowsAcrossTheGroup) {
  const Outcome o = outcome_of(
      make_case(kMeshX2Y1, kAllocs, json::array({copy({{"collective_axes", "x"}}), wait()})));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(*barrier_of(o, r, "bar").armed, 32768);
    EXPECT_EQ(*barrier_of(o, r, "bar").received, 32768);
    EXPECT_EQ(dst_at(o, r, 0, 0), x_at(0, 0, 64));
    EXPECT_EQ(dst_at(o, r, 64, 5), x_at(64, 5, 64));
  }
}

TEST(Accounting, MulticastOverSizeOneAxisIsPlain) {
  const Outcome plain = outcome_of(make_case(kMeshX2Y1, kAllocs, json::array({copy(), wait()})));
  const Outcome y = outcome_of(
      make_case(kMeshX2Y1, kAllocs, json::array({copy({{"collective_axes", "y"}}), wait()})));
  EXPECT_EQ(outcome_to_json_for_test(plain), outcome_to_json_for_test(y));
}

TEST(Accounting, PartitionedLeaderArmsTwiceAndEachCtaHoldsItsHalf) {
  const json j = make_case(
      kMeshX2Y1, kAllocs,
      json::array({copy({{"collective_axes", "x"}, {"leader_tracked", {{"partitioned", 0}}}}),
                   when({{"axis", "x"}, {"eq", 0}}, json::array({wait()}))}),
      {256, 64}, "float32", "sm_100a");
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(*barrier_of(o, 0, "bar").armed, 65536);
  EXPECT_EQ(*barrier_of(o, 0, "bar").received, 65536);
  EXPECT_EQ(*barrier_of(o, 1, "bar").armed, 0);
  EXPECT_EQ(*barrier_of(o, 1, "bar").received, 0);
  EXPECT_EQ(*barrier_of(o, 1, "bar").arrivals, 0);
  EXPECT_EQ(dst_at(o, 0, 0, 0), x_at(0, 0, 64));
  EXPECT_EQ(dst_at(o, 1, 0, 0), x_at(128, 0, 64));
  EXPECT_EQ(dst_at(o, 1, 127, 63), x_at(255, 63, 64));
}

TEST(Accounting, PartitionedOnDimOne) {
  const json j = make_case(
      kMeshX2Y1, kAllocs,
      json::array({copy({{"collective_axes", "x"}, {"leader_tracked", {{"partitioned", 1}}}}),
                   when({{"axis", "x"}, {"eq", 0}}, json::array({wait()}))}),
      {128, 128}, "float32", "sm_100a");
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(dst_at(o, 1, 3, 0), x_at(3, 64, 128));
  EXPECT_EQ(dst_at(o, 0, 3, 63), x_at(3, 63, 128));
}

TEST(Accounting, ReplicatedRoutesEveryCompletionToTheLeader) {
  const json j =
      make_case(kMeshX2Y1, kAllocs,
                json::array({copy({{"collective_axes", "x"}, {"leader_tracked", "replicated"}}),
                             when({{"axis", "x"}, {"eq", 0}}, json::array({wait()}))}),
                {128, 64}, "float32", "sm_100a");
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(*barrier_of(o, 0, "bar").armed, 65536);
  EXPECT_EQ(*barrier_of(o, 0, "bar").received, 65536);
  EXPECT_EQ(*barrier_of(o, 1, "bar").received, 0);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(dst_at(o, r, 100, 1), x_at(100, 1, 64));
}

TEST(Accounting, ClusterOfFourSplitsAcrossDimsForTwoRows) {
  // Spec 3.6: cluster (4,), dst f32[2,64] (D = 512): CTA i loads row i%2, cols 32*(i//2)..+31.
  const json j = make_case({{"cluster", {4}}, {"cluster_names", {"x"}}},
                           json::array({smem("dst", {2, 64}), barrier("bar")}),
                           json::array({copy({{"collective_axes", "x"}}), wait()}), {2, 64});
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(*barrier_of(o, r, "bar").armed, 512);
    EXPECT_EQ(*barrier_of(o, r, "bar").received, 512);
    EXPECT_EQ(dst_at(o, r, 1, 63), x_at(1, 63, 64));
  }
}

TEST(Accounting, PredicateFalseArrivesWithNoBytesAndMovesNothing) {
  const json j = make_case(
      kMeshX2Y1, kAllocs, json::array({copy({{"predicate", {{"axis", "x"}, {"eq", 0}}}}), wait()}));
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(*barrier_of(o, 1, "bar").armed, 0);
  EXPECT_EQ(*barrier_of(o, 1, "bar").arrivals, 1);
  EXPECT_EQ(*barrier_of(o, 1, "bar").phases, 1);
  EXPECT_EQ(o.ctas[1].buffers[0].bytes.front(), kSmemSentinel);
}

TEST(Accounting, OutOfBoundsRowsAreZeroOnTheTensorPath) {
  // CTA x=1 starts at row 96 of a 128-row array and copies 64 rows: rows 32..63 are zero.
  json src = {{"input", "x"}};
  src["index"] = json::array({{{"start", {{"axis", "x"}, {"mul", 96}}}, {"size", 64}}});
  const json j = make_case(kMeshX2Y1, json::array({smem("dst", {64, 64}), barrier("bar")}),
                           json::array({copy({{"src", src}}), wait()}));
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(dst_at(o, 1, 31, 0), x_at(127, 0, 64));
  EXPECT_EQ(dst_at(o, 1, 32, 0), 0u);
  EXPECT_EQ(*barrier_of(o, 1, "bar").received, 64 * 64 * 4);
}

TEST(Deadlocks, LeaderTrackingOnASizeOneAxisNeverBalances) {
  const json j = make_case(
      kMeshX2Y1, kAllocs,
      json::array({copy({{"collective_axes", "y"}, {"leader_tracked", "replicated"}}), wait()}),
      {128, 64}, "float32", "sm_100a");
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  EXPECT_EQ(*barrier_of(o, 0, "bar").armed, 65536);
  EXPECT_EQ(*barrier_of(o, 0, "bar").received, 32768);
  EXPECT_FALSE(o.ctas[0].waits.at(0).completed);
}

TEST(Deadlocks, MulticastIssuedByPartOfTheGroup) {
  const json j =
      make_case(kMeshX2Y1, kAllocs,
                json::array({when({{"axis", "x"}, {"eq", 0}},
                                  json::array({copy({{"collective_axes", "x"}}), wait()}))}));
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  EXPECT_EQ(*barrier_of(o, 0, "bar").received, 16384);
  EXPECT_EQ(*barrier_of(o, 1, "bar").received,
            16384);  // tx goes negative on a barrier nobody armed
  EXPECT_EQ(*barrier_of(o, 1, "bar").tx, -16384);
}

TEST(Deadlocks, NonLeaderWaitingAfterPartitionedCopy) {
  const json j = make_case(
      kMeshX2Y1, kAllocs,
      json::array(
          {copy({{"collective_axes", "x"}, {"leader_tracked", {{"partitioned", 0}}}}), wait()}),
      {256, 64}, "float32", "sm_100a");
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  EXPECT_TRUE(o.ctas[0].waits.at(0).completed);
  EXPECT_FALSE(o.ctas[1].waits.at(0).completed);
}

TEST(Interpret, PartitionedGivesEveryCtaTheFirstHalf) {
  const json j = make_case(
      kMeshX2Y1, kAllocs,
      json::array(
          {copy({{"collective_axes", "x"}, {"leader_tracked", {{"partitioned", 0}}}}), wait()}),
      {256, 64}, "float32", "sm_100a", "lane", "interpret");
  const Outcome o = outcome_of(j, Profile::kInterpret);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);  // every CTA's own barrier gets one arrival
  EXPECT_EQ(dst_at(o, 1, 0, 0), x_at(0, 0, 64));
  EXPECT_FALSE(barrier_of(o, 0, "bar").armed.has_value());
}

TEST(Interpret, ThreadAxisRequired) {
  json j = make_case({{"num_threads", 2}, {"thread_name", "wg"}}, kAllocs, json::array({copy()}));
  expect_rejected(j, "interpret.scoped.thread_axis_required",
                  "Scoped allocation must have the thread axis in its collective axes.",
                  Profile::kInterpret);
}

}  // namespace
}  // namespace collfuzz::testing
