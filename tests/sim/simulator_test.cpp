// The simulator end to end: data in every CTA's SMEM, the barrier records in the reference's
// units, deadlocks with the barrier state, out-of-bounds fills, undefined behaviour.
#include <gtest/gtest.h>

#include "harness/core/fill.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz::sim {
namespace {

using simtest::barrier;
using simtest::buffer;
using simtest::cta;
using simtest::make_case;

std::string copy_wait(const std::string& dst, const std::string& extra,
                      const std::string& after = "") {
  return R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": )" + dst +
         R"(, "dtype": "float32"}, {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"})" +
         extra + R"(}, {"op": "barrier_wait", "barrier": {"alloc": "bar"}})" + after + "]}]";
}

std::string input(const std::string& shape) {
  return R"([{"name": "x", "shape": )" + shape + R"(, "dtype": "float32"}])";
}

std::vector<std::uint8_t> input_rows(const Case& c, std::int64_t first_row, std::int64_t rows,
                                     std::int64_t cols) {
  const std::vector<std::uint8_t> all = fill_bytes(c.inputs[0]);
  return std::vector<std::uint8_t>(all.begin() + first_row * cols * 4,
                                   all.begin() + (first_row + rows) * cols * 4);
}

TEST(Simulator, MulticastFillsEveryCtaAndBalancesEachBarrier) {
  const Case c =
      make_case(R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane, input("[128, 64]"),
                copy_wait("[128, 64]", R"(, "collective_axes": "x")"));
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t r = 0; r < 2; ++r) {
    const BarrierRecord* b = barrier(cta(o, r), "bar");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->armed, 32768);
    EXPECT_EQ(b->received, 32768);  // 16384 from each issuer
    EXPECT_EQ(b->arrivals, 1);      // one Pallas arrival = 128 hardware arrivals
    EXPECT_EQ(b->count, 1);
    EXPECT_EQ(b->phases, 1);
    EXPECT_EQ(b->pending, 1);
    EXPECT_EQ(b->tx, 0);
    EXPECT_EQ(buffer(cta(o, r), "dst")->bytes, fill_bytes(c.inputs[0]));
    ASSERT_EQ(cta(o, r).waits.size(), 1u);
    EXPECT_TRUE(cta(o, r).waits[0].completed);
    EXPECT_EQ(cta(o, r).waits[0].barrier, "bar[0]");
  }
}

TEST(Simulator, PartitionedHalvesLandInTheirCtasAndCompleteOnTheLeader) {
  const Case c = make_case(
      R"({"cluster": [2], "cluster_names": ["x"]})", R"({"arch": "sm_100a", "semantics": "lane"})",
      input("[256, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
                                {"name": "bar", "kind": "barrier"}],
                              "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                                        "barrier": {"alloc": "bar"}, "collective_axes": "x", "leader_tracked": {"partitioned": 0}},
                                       {"op": "when", "cond": {"axis": "x", "eq": 0},
                                        "body": [{"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(barrier(cta(o, 0), "bar")->armed, 65536);
  EXPECT_EQ(barrier(cta(o, 0), "bar")->received, 65536);
  EXPECT_EQ(barrier(cta(o, 1), "bar")->armed, 0);  // the non-leader's barrier is never touched
  EXPECT_EQ(barrier(cta(o, 1), "bar")->received, 0);
  EXPECT_EQ(buffer(cta(o, 0), "dst")->bytes, input_rows(c, 0, 128, 64));
  EXPECT_EQ(buffer(cta(o, 1), "dst")->bytes, input_rows(c, 128, 128, 64));
}

TEST(Simulator, LeaderTrackingOverASizeOneAxisDeadlocksWithTheBarrierState) {
  // cluster (2, 1): "y" has size 1, so every CTA is "first", arms 2D and receives D.
  const Case c = make_case(
      R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})",
      R"({"arch": "sm_100a", "semantics": "lane"})", input("[128, 64]"),
      copy_wait("[128, 64]", R"(, "collective_axes": "y", "leader_tracked": "replicated")"));
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  for (std::int64_t r = 0; r < 2; ++r) {
    const BarrierRecord* b = barrier(cta(o, r), "bar");
    EXPECT_EQ(b->armed, 65536);
    EXPECT_EQ(b->received, 32768);
    EXPECT_EQ(b->tx, 32768);  // the balance the wait is stuck on
    EXPECT_EQ(b->pending, 0);
    EXPECT_FALSE(cta(o, r).waits[0].completed);
  }
}

TEST(Simulator, TensorMapFillsOutOfBoundsWithZerosWhateverTheMode) {
  // CTA 1 reads rows 96..159 of a 128-row array: rows 128.. are zeros, even with UNDEFINED.
  for (const char* mode : {"zeros", "undefined"}) {
    const Case c = make_case(
        R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane, input("[128, 64]"),
        std::string(
            R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
            {"name": "bar", "kind": "barrier"}],
          "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"axis": "x", "mul": 96}, "size": 64}]},
                    "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}, "collective_axes": "x", "oob_mode": ")") +
            mode + R"("}, {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
    Simulator sim;
    const Outcome o = sim.run(c);
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << mode;
    // Multicast: CTA 0 loaded rows 0..31 into both, CTA 1 rows 96+32..96+63 = 128..159 (all out of
    // bounds).
    const BufferRecord* b = buffer(cta(o, 0), "dst");
    EXPECT_FALSE(b->undefined);
    const std::vector<std::uint8_t> first = input_rows(c, 0, 32, 64);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), b->bytes.begin()));
    EXPECT_TRUE(std::all_of(b->bytes.begin() + 32 * 64 * 4, b->bytes.end(),
                            [](std::uint8_t v) { return v == 0; }));
  }
}

TEST(Simulator, BulkPathOutOfBoundsIsUndefined) {
  const Case c = make_case(
      R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane, input("[4, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [2, 64], "dtype": "float32"},
          {"name": "bar", "kind": "barrier"}],
        "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"axis": "x", "mul": 3}, "size": 2}]},
                  "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}, "oob_mode": "undefined"},
                 {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_FALSE(buffer(cta(o, 0), "dst")->undefined);
  EXPECT_TRUE(buffer(cta(o, 1), "dst")->undefined);
  // The clamped transfer still balances: the remainder is completed explicitly.
  EXPECT_EQ(barrier(cta(o, 1), "bar")->received, 512);
  EXPECT_EQ(barrier(cta(o, 1), "bar")->phases, 1);
}

TEST(Simulator, SentinelMarksBytesNobodyWrote) {
  const Case c = make_case(
      "{}", simtest::kLane, input("[128, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "s", "kind": "smem", "shape": [8], "dtype": "uint8"}], "body": []}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(buffer(cta(o, 0), "s")->bytes, std::vector<std::uint8_t>(8, kSmemSentinel));
}

TEST(Simulator, SiblingScopesSeeTheContentsTheirPredecessorLeft) {
  const Case c = make_case("{}", simtest::kLane, input("[128, 64]"), R"([
      {"op": "run_scoped", "allocs": [{"name": "a", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
                                      {"name": "bar", "kind": "barrier"}],
       "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "a"}, "barrier": {"alloc": "bar"}},
                {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]},
      {"op": "run_scoped", "allocs": [{"name": "b", "kind": "smem", "shape": [16], "dtype": "float32"}], "body": []}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  const std::vector<std::uint8_t> head = input_rows(c, 0, 1, 16);
  EXPECT_EQ(buffer(cta(o, 0), "b")->bytes, head);
}

TEST(Simulator, ClusterBarrierSynchronisesTheGroup) {
  const Case c = make_case(
      R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})", simtest::kLane, input("[128, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["a", "b"]}],
                              "body": [{"op": "barrier_arrive", "barrier": {"alloc": "cb"}},
                                       {"op": "barrier_wait", "barrier": {"alloc": "cb"}}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t r = 0; r < 4; ++r) {
    const BarrierRecord* b = barrier(cta(o, r), "cb");
    EXPECT_EQ(b->count, 3);     // sum(sizes) - len(dims) + 1 = 2 + 2 - 2 + 1
    EXPECT_EQ(b->arrivals, 3);  // itself and its neighbour along each axis
    EXPECT_EQ(b->phases, 1);
  }
}

TEST(Simulator, AWaitWithoutArrivalsIsADeadlockNotAHang) {
  const Case c = make_case(
      "{}", simtest::kLane, input("[128, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "b", "kind": "barrier", "num_arrivals": 2}],
                              "body": [{"op": "barrier_arrive", "barrier": {"alloc": "b"}},
                                       {"op": "barrier_wait", "barrier": {"alloc": "b"}}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  EXPECT_EQ(barrier(cta(o, 0), "b")->pending, 1);
  EXPECT_EQ(barrier(cta(o, 0), "b")->arrivals, 1);
}

TEST(Simulator, OverArrivalLeavesThePhaseIncompleteForever) {
  // A copy on an orders_tensor_core barrier: all 128 lanes arrive.expect_tx on a count of 1, so
  // the pending count goes below zero and the phase never completes.
  const Case c = make_case(
      "{}", R"({"arch": "sm_100a", "semantics": "lane"})", input("[128, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
           {"name": "bar", "kind": "barrier", "orders_tensor_core": true}],
         "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
                  {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  const BarrierRecord* b = barrier(cta(o, 0), "bar");
  EXPECT_EQ(b->arrivals, 128);  // orders_tensor_core: one reported arrival per hardware arrival
  EXPECT_EQ(b->pending, -127);
  EXPECT_EQ(b->tx, 0);
  EXPECT_EQ(b->phases, 0);
}

TEST(Simulator, CpAsyncCopiesALinearRunOfAnyRank) {
  // Pre-Hopper: cp.async threads copy consecutive elements from the slice start, whatever the
  // array's rank (here 6 dims, more than a tensor map takes).
  const Case c = make_case(
      "{}", R"({"arch": "sm_80", "semantics": "lane"})",
      R"([{"name": "x", "shape": [2, 2, 2, 2, 2, 128], "dtype": "float32"}])",
      R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [2, 2, 2, 2, 2, 128],
                                "dtype": "float32"}],
                              "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                                        "oob_mode": "promise_in_bounds"}]}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(buffer(cta(o, 0), "dst")->bytes, fill_bytes(c.inputs[0]));
  EXPECT_FALSE(buffer(cta(o, 0), "dst")->undefined);
}

TEST(Simulator, StoreWritesTheOutputAndItsRange) {
  const Case c =
      make_case(R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane, input("[128, 64]"),
                copy_wait("[128, 64]", "",
                          R"(, {"op": "when", "cond": {"axis": "x", "eq": 1}, "body": [
                                          {"op": "copy_smem_to_gmem", "src": {"alloc": "dst", "index": [5]},
                                           "dst": {"output": "out", "index": [1]}}]})"),
                R"([{"name": "out", "shape": [2, 64], "dtype": "float32"}])");
  Simulator sim;
  const Outcome o = sim.run(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  ASSERT_EQ(o.outputs.size(), 1u);
  EXPECT_EQ(o.outputs[0].written, (std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 128}}));
  const std::vector<std::uint8_t> row5 = input_rows(c, 5, 1, 64);
  EXPECT_TRUE(std::equal(row5.begin(), row5.end(), o.outputs[0].bytes.begin() + 64 * 4));
}

}  // namespace
}  // namespace collfuzz::sim
