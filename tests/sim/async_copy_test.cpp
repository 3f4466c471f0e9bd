// The transfers the lowering plans for each copy mode, against the worked examples of the spec
// (section 3.6): boxes, coordinates, destination offsets, multicast masks, the chunk split and the
// PARTITIONED split, and the barrier that receives the bytes.
#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.h"

namespace collfuzz::lowering {
namespace {

using simtest::make_case;

std::vector<std::int64_t> box(const LoadOp& l) {
  return std::vector<std::int64_t>(l.tensor.box, l.tensor.box + l.tensor.rank);
}
std::vector<std::int64_t> coords(const LoadOp& l) {
  return std::vector<std::int64_t>(l.tensor.coords, l.tensor.coords + l.tensor.rank);
}

std::string copy_program(const std::string& dst_shape, const std::string& extra) {
  return R"([{"op": "run_scoped", "allocs": [
      {"name": "dst", "kind": "smem", "shape": )" +
         dst_shape + R"(, "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
              "barrier": {"alloc": "bar"})" +
         extra + R"(},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])";
}

std::string input(const std::string& shape) {
  return R"([{"name": "x", "shape": )" + shape + R"(, "dtype": "float32"}])";
}

TEST(AsyncCopy, PlainCopyIsOneTensorBox) {
  const Plan p = simtest::lower_ok(make_case(R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})",
                                             simtest::kLane, input("[128, 64]"),
                                             copy_program("[128, 64]", "")));
  ASSERT_EQ(p.loads.size(), 2u);
  for (const LoadOp& l : p.loads) {
    EXPECT_EQ(l.path, LoadPath::kTensor);
    EXPECT_EQ(box(l), (std::vector<std::int64_t>{128, 64}));
    EXPECT_EQ(coords(l), (std::vector<std::int64_t>{0, 0}));
    EXPECT_EQ(l.complete_bytes, 32768);
    EXPECT_EQ(l.multicast_mask, 0u);
  }
  // Lane semantics: every one of the 128 lanes arms 256 bytes.
  for (const ArriveOp& a : p.arrives) {
    EXPECT_EQ(a.lanes, 128);
    EXPECT_EQ(a.tx_lane0, 256);
    EXPECT_EQ(a.tx_other, 256);
  }
}

TEST(AsyncCopy, MulticastOverTwoCtasSplitsRows) {
  // Cluster (2, 1), ("x", "y"); multicast on "x": mask 0b11, 64 rows per CTA.
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})", simtest::kLane,
                input("[128, 64]"), copy_program("[128, 64]", R"(, "collective_axes": ["x"])")));
  ASSERT_EQ(p.loads.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const LoadOp& l = p.loads[i];
    EXPECT_EQ(box(l), (std::vector<std::int64_t>{64, 64}));
    EXPECT_EQ(coords(l), (std::vector<std::int64_t>{64 * static_cast<std::int64_t>(i), 0}));
    EXPECT_EQ(l.smem_offset, 16384 * static_cast<std::int64_t>(i));
    EXPECT_EQ(l.complete_bytes, 16384);
    EXPECT_EQ(l.multicast_mask, 0b11u);
  }
}

TEST(AsyncCopy, MulticastOverASizeOneAxisIsPlain) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})", simtest::kLane,
                input("[128, 64]"), copy_program("[128, 64]", R"(, "collective_axes": ["y"])")));
  for (const LoadOp& l : p.loads) {
    EXPECT_EQ(l.multicast_mask, 0u);
    EXPECT_EQ(box(l), (std::vector<std::int64_t>{128, 64}));
  }
}

TEST(AsyncCopy, MulticastOverFourCtas) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [4], "cluster_names": ["x"]})", simtest::kLane, input("[128, 64]"),
                copy_program("[128, 64]", R"(, "collective_axes": "x")")));
  ASSERT_EQ(p.loads.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(coords(p.loads[i])[0], 32 * static_cast<std::int64_t>(i));
    EXPECT_EQ(p.loads[i].complete_bytes, 8192);
    EXPECT_EQ(p.loads[i].multicast_mask, 0b1111u);
  }
}

TEST(AsyncCopy, ChunkSplitAcrossTwoDims) {
  // Cluster (4,), dst f32[2, 64]: dim 0 is split fully by i % 2, then dim 1 by i // 2.
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [4], "cluster_names": ["x"]})", simtest::kLane, input("[2, 64]"),
                copy_program("[2, 64]", R"(, "collective_axes": "x")")));
  ASSERT_EQ(p.loads.size(), 4u);
  for (std::int64_t i = 0; i < 4; ++i) {
    const LoadOp& l = p.loads[static_cast<std::size_t>(i)];
    EXPECT_EQ(box(l), (std::vector<std::int64_t>{1, 32}));
    EXPECT_EQ(coords(l), (std::vector<std::int64_t>{i % 2, 32 * (i / 2)}));
    EXPECT_EQ(l.smem_offset, ((i % 2) * 64 + 32 * (i / 2)) * 4);
    EXPECT_EQ(l.complete_bytes, 128);
  }
}

TEST(AsyncCopy, ClusterTwoByTwoMulticastOnOneAxis) {
  // Collective "a" (CUDA y): group {(0,b),(1,b)}, mask 0b0101 << b, CTA (a, b) loads rows 64a..
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})", simtest::kLane,
                input("[128, 64]"), copy_program("[128, 64]", R"(, "collective_axes": "a")")));
  for (std::int64_t r = 0; r < 4; ++r) {
    const LoadOp& l = p.loads[static_cast<std::size_t>(r)];
    EXPECT_EQ(l.multicast_mask, 0b0101u << (r % 2));
    EXPECT_EQ(coords(l)[0], 64 * (r / 2));
  }
  const Plan q = simtest::lower_ok(make_case(
      R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})", simtest::kLane, input("[128, 64]"),
      copy_program("[128, 64]", R"(, "collective_axes": ["a", "b"])")));
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(q.loads[static_cast<std::size_t>(r)].multicast_mask, 0b1111u);
    EXPECT_EQ(coords(q.loads[static_cast<std::size_t>(r)])[0], 32 * r);
  }
}

TEST(AsyncCopy, PartitionedAlongRows) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2], "cluster_names": ["x"]})",
                R"({"arch": "sm_100a", "semantics": "lane"})", input("[256, 64]"),
                copy_program("[128, 64]",
                             R"(, "collective_axes": "x", "leader_tracked": {"partitioned": 0})")));
  ASSERT_EQ(p.loads.size(), 2u);
  for (std::int64_t i = 0; i < 2; ++i) {
    const LoadOp& l = p.loads[static_cast<std::size_t>(i)];
    EXPECT_EQ(box(l), (std::vector<std::int64_t>{128, 64}));
    EXPECT_EQ(coords(l), (std::vector<std::int64_t>{128 * i, 0}));
    EXPECT_EQ(l.smem_offset, 0);
    EXPECT_EQ(l.multicast_mask, 0u);
    EXPECT_TRUE(l.complete_at_leader);
    EXPECT_EQ(l.leader, 0);
    EXPECT_EQ(l.complete_bytes, 32768);
  }
  // Only the leader arms, with the bytes of both CTAs: 65536 / 128 per lane.
  ASSERT_EQ(p.arrives.size(), 1u);
  EXPECT_EQ(p.arrives[0].tx_lane0, 512);
  EXPECT_EQ(p.threads[0].num_steps - p.threads[1].num_steps, 1);
}

TEST(AsyncCopy, PartitionedAlongColumns) {
  const Plan p = simtest::lower_ok(
      make_case(R"({"cluster": [2], "cluster_names": ["x"]})",
                R"({"arch": "sm_100a", "semantics": "lane"})", input("[128, 128]"),
                copy_program("[128, 64]",
                             R"(, "collective_axes": "x", "leader_tracked": {"partitioned": 1})")));
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(coords(p.loads[static_cast<std::size_t>(i)]), (std::vector<std::int64_t>{0, 64 * i}));
  }
}

TEST(AsyncCopy, JaxTwelveLeaderTrackedCopiesCompleteOnTheirPairsLeaderInATwoByTwoCluster) {
  // JAX 0.12.0.1 allows leader tracking along the last cluster axis ("b", CUDA x) of size 2 in a
  // larger cluster: the pairs are ranks {0, 1} and {2, 3}, each completing on its own leader
  // (rank 0 or 2), and PARTITIONED splits rows between the two CTAs of a pair. Found by a
  // `collfuzz fuzz --jax 0.12.0.1` campaign (seed 42): the simulator completed every pair on
  // rank 0, and refused PARTITIONED with 0.11.2's "clusters of size 2"; jax-ir agrees with the
  // reference.
  const char* mesh = R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})";
  const char* target = R"({"arch": "sm_100a", "semantics": "lane", "jax": "0.12.0.1"})";
  struct Kind {
    const char* leader;
    const char* src;  // PARTITIONED: the dst's rows times the pair
    std::int64_t rows;
  };
  for (const Kind& k : {Kind{R"("replicated")", "[128, 64]", 64},
                        Kind{R"({"partitioned": 0})", "[256, 64]", 128}}) {
    const Case c =
        make_case(mesh, target, input(k.src),
                  copy_program("[128, 64]", std::string(R"(, "collective_axes": "b", )") +
                                                R"("leader_tracked": )" + k.leader));
    const Plan p = simtest::lower_ok(c);
    ASSERT_EQ(p.loads.size(), 4u) << k.leader;
    for (std::int64_t r = 0; r < 4; ++r) {
      const LoadOp& l = p.loads[static_cast<std::size_t>(r)];
      EXPECT_TRUE(l.complete_at_leader) << k.leader;
      EXPECT_EQ(l.leader, r / 2 * 2) << k.leader << " rank " << r;
      EXPECT_EQ(coords(l)[0], k.rows * (r % 2)) << k.leader << " rank " << r;
    }
    simtest::predicted_and_simulated(c);
  }
}

TEST(AsyncCopy, ReplicatedMulticastsHalvesAndCompletesOnTheLeader) {
  const Plan p = simtest::lower_ok(make_case(
      R"({"cluster": [2], "cluster_names": ["x"]})", R"({"arch": "sm_100a", "semantics": "lane"})",
      input("[128, 64]"),
      copy_program("[128, 64]", R"(, "collective_axes": "x", "leader_tracked": "replicated")")));
  for (std::int64_t i = 0; i < 2; ++i) {
    const LoadOp& l = p.loads[static_cast<std::size_t>(i)];
    EXPECT_EQ(coords(l)[0], 64 * i);
    EXPECT_EQ(l.multicast_mask, 0b11u);
    EXPECT_TRUE(l.complete_at_leader);
    EXPECT_EQ(l.leader, 0);
    EXPECT_EQ(l.complete_bytes, 16384);
  }
}

TEST(AsyncCopy, BulkPathForContiguousSlicesWithoutZeroFill) {
  const Plan p = simtest::lower_ok(
      make_case(R"({})", simtest::kLane, input("[128, 64]"),
                copy_program("[128, 64]", R"(, "oob_mode": "promise_in_bounds")")));
  ASSERT_EQ(p.loads.size(), 1u);
  EXPECT_EQ(p.loads[0].path, LoadPath::kBulk);
  EXPECT_EQ(p.loads[0].linear_offset, 0);
  EXPECT_EQ(p.loads[0].linear_elements, 128 * 64);
}

TEST(AsyncCopy, SqueezedDimsMoveToTheFront) {
  // src f32[4, 8, 64] indexed [2]: the squeezed dim (size 4 in GMEM) stays as a box dim of 1.
  const Plan p = simtest::lower_ok(make_case(
      R"({})", simtest::kLane, input("[4, 8, 64]"),
      R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [8, 64], "dtype": "float32"},
            {"name": "bar", "kind": "barrier"}],
          "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [2]}, "dst": {"alloc": "dst"},
                    "barrier": {"alloc": "bar"}}]}])"));
  ASSERT_EQ(p.loads.size(), 1u);
  EXPECT_EQ(box(p.loads[0]), (std::vector<std::int64_t>{1, 8, 64}));
  EXPECT_EQ(coords(p.loads[0]), (std::vector<std::int64_t>{2, 0, 0}));
}

}  // namespace
}  // namespace collfuzz::lowering
