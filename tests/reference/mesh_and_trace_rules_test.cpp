// Rule families: mesh construction and trace-time checks (spec 1.1, 1.4, 3.1, 3.2).
#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

TEST(MeshRules, ClusterRankPrintsTheMeshRepr) {
  expect_rejected(
      make_case({{"cluster", {1, 1, 1, 2}}, {"cluster_names", {"a", "b", "c", "d"}}}, kAllocs,
                json::array({copy()})),
      "mesh.cluster.rank",
      "cluster= must be at most 3D, got Mesh(grid=(), grid_names=(), cluster=(1, 1, 1, 2), "
      "cluster_names=('a', 'b', 'c', 'd'), num_threads=None, thread_name=None, kernel_name=None).");
}

TEST(MeshRules, NamesMustMatchDims) {
  expect_rejected(
      make_case({{"grid", {2}}, {"grid_names", json::array()}}, kAllocs, json::array({copy()})),
      "mesh.grid_names.length",
      "grid_names must have the same length as grid, got Mesh(grid=(2,), grid_names=(), "
      "cluster=(), "
      "cluster_names=(), num_threads=None, thread_name=None, kernel_name=None).");
  expect_rejected(
      make_case({{"cluster", {2, 2}}, {"cluster_names", {"x"}}}, kAllocs, json::array({copy()})),
      "mesh.cluster_names.length",
      "cluster_names must have the same length as cluster, got Mesh(grid=(), grid_names=(), "
      "cluster=(2, 2), cluster_names=('x',), num_threads=None, thread_name=None, "
      "kernel_name=None).");
}

TEST(MeshRules, ThreadsComeTogetherAndAtMost16) {
  expect_rejected(
      make_case({{"num_threads", 2}}, kAllocs, json::array({copy()})), "mesh.threads.both_or_none",
      "num_threads and thread_name must be either both set or both None, got Mesh(grid=(), "
      "grid_names=(), cluster=(), cluster_names=(), num_threads=2, thread_name=None, "
      "kernel_name=None)");
  expect_rejected(
      make_case({{"num_threads", 17}, {"thread_name", "wg"}}, kAllocs, json::array({copy()})),
      "mesh.threads.max",
      "Requested too many CUDA threads per block. Each Mosaic thread corresponds to 128 CUDA "
      "threads. "
      "At most 16 are supported, got Mesh(grid=(), grid_names=(), cluster=(), cluster_names=(), "
      "num_threads=17, thread_name='wg', kernel_name=None)");
}

TEST(MeshRules, CompositeNamesPrintAsTuples) {
  expect_rejected(
      make_case({{"cluster", {2}}, {"cluster_names", json::array({json::array({"x", "y"}), "z"})}},
                kAllocs, json::array({copy()})),
      "mesh.cluster_names.length",
      "cluster_names must have the same length as cluster, got Mesh(grid=(), grid_names=(), "
      "cluster=(2,), cluster_names=(('x', 'y'), 'z'), num_threads=None, thread_name=None, "
      "kernel_name=None).");
}

TEST(TraceRules, BarrierNumArrivals) {
  expect_rejected(make_case({}, json::array({smem("dst", {128, 64}), barrier("bar", 0)}),
                            json::array({copy()})),
                  "alloc.barrier.num_arrivals", "Num arrivals must be at least 1, but got 0");
}

TEST(TraceRules, LeaderTrackedNeedsCollectiveAxes) {
  expect_rejected(make_case({{"cluster", {2}}, {"cluster_names", {"x"}}}, kAllocs,
                            json::array({copy({{"leader_tracked", "replicated"}})})),
                  "copy.leader_tracked.needs_collective_axes",
                  "`collective_axes` must be specified when `leader_tracked` is set");
  // An empty tuple passes the Python check (and later fails as not collective).
  const Outcome o = outcome_of(make_case(
      {{"cluster", {2}}, {"cluster_names", {"x"}}}, kAllocs,
      json::array(
          {copy({{"leader_tracked", {{"partitioned", 0}}}, {"collective_axes", json::array()}})})));
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->rule, "launch_context.partitioned.not_collective");
}

TEST(TraceRules, DtypeMismatchNamesNumpyDtypes) {
  expect_rejected(make_case({}, json::array({smem("dst", {128, 64}), barrier("bar")}),
                            json::array({copy()}), {128, 64}, "bfloat16"),
                  "copy.dtype_mismatch",
                  "Expected dtypes to match but src had type bfloat16 and dst had type float32");
}

TEST(TraceRules, SourceShapeWithTrailingSpace) {
  expect_rejected(make_case({}, json::array({smem("dst", {256}), barrier("bar")}),
                            json::array({copy()}), {128}),
                  "copy.src_shape", "Expected source shape to be (256,), but got (128,). ");
}

TEST(TraceRules, PartitionedSourceShape) {
  // tests/pallas/mosaic_gpu_test.py: dst bf16[8], src [127], PARTITIONED(0) over an axis of 2.
  expect_rejected(
      make_case(
          {{"cluster", {2}}, {"cluster_names", {"x"}}},
          json::array({smem("dst", {8}, "bfloat16"), barrier("bar")}),
          json::array({copy({{"collective_axes", "x"}, {"leader_tracked", {{"partitioned", 0}}}})}),
          {127}, "bfloat16"),
      "copy.src_shape",
      "Expected source shape to be (16,), but got (127,). Dim 0 is partitioned over an axis of "
      "size 2.");
  // Spec 3.6: src f32[128,64] for dst f32[128,64] PARTITIONED(0) over "x".
  expect_rejected(make_case({{"cluster", {2, 1}}, {"cluster_names", {"x", "y"}}}, kAllocs,
                            json::array({copy({{"collective_axes", "x"},
                                               {"leader_tracked", {{"partitioned", 0}}}})})),
                  "copy.src_shape",
                  "Expected source shape to be (256, 64), but got (128, 64). Dim 0 is partitioned "
                  "over an axis of "
                  "size 2.");
}

TEST(TraceRules, CompositeAxisSizeInPartitionedShape) {
  // cluster_names=(("x","y"),): the composite axis of size 4 (dst [32] -> src (128,)); src [128]
  // has the right shape, src [64] gets "(128,)".
  expect_rejected(
      make_case({{"cluster", {4}}, {"cluster_names", json::array({json::array({"x", "y"})})}},
                json::array({smem("dst", {32}), barrier("bar")}),
                json::array({copy({{"collective_axes", json::array({json::array({"x", "y"})})},
                                   {"leader_tracked", {{"partitioned", 0}}}})}),
                {64}),
      "copy.src_shape",
      "Expected source shape to be (128,), but got (64,). Dim 0 is partitioned over an axis of "
      "size 4.");
}

TEST(TraceRules, UnboundAxisInPartitionedCopy) {
  expect_rejected(make_case({{"cluster", {2}}, {"cluster_names", {"x"}}}, kAllocs,
                            json::array({copy({{"collective_axes", {"q"}},
                                               {"leader_tracked", {{"partitioned", 0}}}})})),
                  "copy.partitioned.unbound_axis", "unbound axis name: q");
}

TEST(TraceRules, TraceErrorsComeBeforeLoweringErrors) {
  // A lowering error in op 0 and a trace error in op 1: the trace error wins.
  json j = make_case({{"cluster", {2}}, {"cluster_names", {"x"}}}, kAllocs,
                     json::array({copy({{"collective_axes", {"nope"}}}),
                                  copy({{"leader_tracked", "replicated"}})}));
  const Outcome o = outcome_of(j);
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->stage, "trace");
  EXPECT_EQ(o.diagnostic->op, "$.program[0].body[1]");
}

}  // namespace
}  // namespace collfuzz::testing
