// The diagnostics the lowering raises, stage by stage, each as JAX 0.11.2 raises it (class and
// exact message from the source; the cases marked "run" were also checked against the real
// lowering through the JAX executor, `collfuzz run --executors jax-lower`).
#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.h"

namespace collfuzz::lowering {
namespace {

struct Expected {
  const char* name;
  const char* mesh;
  const char* target;
  const char* inputs;
  std::string program;
  const char* stage;  // nullptr: accepted
  const char* exception;
  const char* message;
  const char* rule;
};

const char* kX = R"([{"name": "x", "shape": [128, 64], "dtype": "float32"}])";
const char* kLane = R"({"arch": "sm_90a", "semantics": "lane"})";
const char* kWg = R"({"arch": "sm_90a", "semantics": "warpgroup"})";
const char* kCluster2 = R"({"cluster": [2], "cluster_names": ["x"]})";

std::string copy_scope(const std::string& dst, const std::string& extra) {
  return R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": )" + dst +
         R"(, "dtype": "float32"}, {"name": "bar", "kind": "barrier", "num_barriers": 1}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"})" +
         extra + R"(}]}])";
}

const Expected kCases[] = {
    // NOLINT(cert-err58-cpp)
    {"mesh_rank", R"({"cluster": [2, 1, 1, 1], "cluster_names": ["a", "b", "c", "d"]})", kLane, kX,
     "[]", "mesh", "ValueError",
     "cluster= must be at most 3D, got Mesh(grid=(), grid_names=(), cluster=(2, 1, 1, 1), "
     "cluster_names=('a', 'b', "
     "'c', 'd'), num_threads=None, thread_name=None, kernel_name=None).",
     "mesh.cluster.rank"},
    {"num_arrivals", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "b", "kind": "barrier", "num_arrivals": 0}], "body": []}])",
     "trace", "ValueError", "Num arrivals must be at least 1, but got 0",
     "alloc.barrier.num_arrivals"},
    {"when_false_is_not_traced", "{}", kLane,
     R"([{"name": "x", "shape": [128, 64], "dtype": "float32"}, {"name": "y", "shape": [128, 64], "dtype": "bfloat16"}])",
     R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}], "body": [{"op": "when", "cond": false, "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "y"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}}]}]}])",
     nullptr, nullptr, nullptr, nullptr},
    {"unbound_partition_axis", kCluster2, kLane,
     R"([{"name": "x", "shape": [256, 64], "dtype": "float32"}])",
     copy_scope("[128, 64]", R"(, "collective_axes": ["q"], "leader_tracked": {"partitioned": 0})"),
     "trace", "NameError", "unbound axis name: q", "copy.partitioned.unbound_axis"},
    {"src_shape_trailing_space", "{}", kLane,
     R"([{"name": "x", "shape": [128], "dtype": "float32"}])", copy_scope("[256]", ""), "trace",
     "ValueError", "Expected source shape to be (256,), but got (128,). ", "copy.src_shape"},
    {"cluster_barrier_unknown_axis", R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})", kLane,
     kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["q"]}], "body": []}])",
     "estimate", "LookupError", "Unknown cluster axis q, available axes: ['y', 'x']",
     "estimate.cluster_barrier.unknown_axis"},
    {"gmem_scratch", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "g", "kind": "gmem", "shape": [4], "dtype": "float32"}], "body": []}])",
     "estimate", "NotImplementedError", "Unsupported memory space: gmem",
     "estimate.gmem.unsupported"},
    {"smem_capacity", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "s", "kind": "smem", "shape": [256, 256], "dtype": "float32"}], "body": []}])",
     "module", "ValueError",
     "Mosaic GPU kernel exceeds available shared memory: smem_bytes=262144 > max_smem_bytes=232448",
     "module.smem.capacity"},
    {"barrier_group_33", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "b", "kind": "barrier", "num_barriers": 33}], "body": []}])",
     "module", "NotImplementedError", "Only up to 32 barriers per group supported",
     "module.barrier.max_32"},
    {"leader_cluster_barrier_two_dims", R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})",
     kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x", "y"],
        "leader_tracked": true}], "body": []}])",
     "module", "NotImplementedError",
     "Only leader tracking for a single collective dimension is supported.",
     "module.cluster_barrier.leader_one_dim"},
    {"scoped_cluster_axis", kCluster2, kLane, kX,
     R"([{"op": "run_scoped", "collective_axes": "x", "allocs": [], "body": []}])", "lower",
     "ValueError", "Only thread-collective allocations are supported in run_scoped.",
     "lower.scoped.only_thread_collective"},
    {"multithreaded_needs_thread_axis", R"({"num_threads": 2, "thread_name": "wg"})", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "s", "kind": "smem", "shape": [8], "dtype": "float32"}], "body": []}])",
     "lower", "NotImplementedError",
     "Only thread-collective allocations are supported in multithreaded kernels. Hint: add "
     "collective_axes=wg to your "
     "run_scoped if you intend all threads to share the same allocation (currently "
     "collective_axes=()).",
     "lower.scoped.multithreaded_needs_collective"},
    {"copy_grid_axis",
     R"({"grid": [2], "grid_names": ["g"], "cluster": [2], "cluster_names": ["x"]})", kLane, kX,
     copy_scope("[128, 64]", R"(, "collective_axes": ["g"])"), "lower", "LookupError",
     "Unknown cluster axis g, available axes: ['x']", "lower.copy.unknown_cluster_axis"},
    {"integer_bytes", "{}", kLane, R"([{"name": "x", "shape": [3], "dtype": "int4"}])",
     R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [3], "dtype": "int4"},
        {"name": "bar", "kind": "barrier"}], "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"},
        "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}}]}])",
     "lower", "ValueError", "Can only transfer integer bytes (shape=[3], dtype=i4)",
     "lower.copy.integer_bytes"},
    {"leader_two_axes", R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})", kLane, kX,
     copy_scope("[128, 64]", R"(, "collective_axes": ["x", "y"], "leader_tracked": "replicated")"),
     "lower", "ValueError", "Expected exactly one collective axis, got collective_axes=('x', 'y')",
     "copy.leader_tracked.one_axis"},
    {"partitioned_cluster_4", R"({"cluster": [4], "cluster_names": ["x"]})", kLane,
     R"([{"name": "x", "shape": [512, 64], "dtype": "float32"}])",
     copy_scope("[128, 64]", R"(, "collective_axes": ["x"], "leader_tracked": {"partitioned": 0})"),
     "lower", "NotImplementedError",
     "Partitioned loads only supported for clusters of size 2. Got cluster size (4, 1, 1).",
     "copy.leader_tracked.cluster_size_2"},
    {"lane_64_bytes", "{}", kLane, R"([{"name": "x", "shape": [16], "dtype": "float32"}])",
     copy_scope("[16]", ""), "lower", "NotImplementedError",
     "Only copies transferring a number of bytes divisible by the warpgroup size are supported. "
     "Got bytes=64 but "
     "warpgroup size is 128",
     "lower.lane.bytes_multiple_of_128"},
    {"warpgroup_64_bytes", "{}", kWg, R"([{"name": "x", "shape": [16], "dtype": "float32"}])",
     copy_scope("[16]", ""), nullptr, nullptr, nullptr, nullptr},
    {"multicast_split_lane", kCluster2, kLane,
     R"([{"name": "x", "shape": [3, 64], "dtype": "float32"}])",
     copy_scope("[3, 64]", R"(, "collective_axes": "x")"), "lower", "ValueError",
     "None of the leading dimensions in the transformed slice shape [3, 64] is divisible by the "
     "collective size 2",
     "launch_context.multicast.no_divisible_dim"},
    {"multicast_split_warpgroup", kCluster2, kWg,
     R"([{"name": "x", "shape": [3, 64], "dtype": "float32"}])",
     copy_scope("[3, 64]", R"(, "collective_axes": "x")"), "dialect", "ValueError",
     "None of the leading dimensions in the transformed slice shape [3, 64] is divisible by the "
     "collective size 2",
     "launch_context.multicast.no_divisible_dim"},
    {"box_512", "{}", kLane, R"([{"name": "x", "shape": [512, 4], "dtype": "float32"}])",
     copy_scope("[512, 4]", ""), "lower", "ValueError",
     "Async copies only support copying <=256 elements along each dimension, got (512, 4)",
     "launch_context.box_max_256"},
    {"duplicate_dims_warpgroup", kCluster2, kWg, kX,
     copy_scope("[128, 64]", R"(, "collective_axes": ["x", "x"])"), "verify", "VerificationError",
     "Pallas encountered an internal verification error. Please file a bug at "
     "https://github.com/jax-ml/jax/issues/new/choose. Error details: 'mosaic_gpu.async_load' op "
     "The `collective` "
     "attribute must not contain duplicate dimensions",
     "verify.async_load.duplicate_dims"},
    // run: ValueError from the TMA descriptor's host initialisation (integer index on the minor
    // dim).
    {"descriptor_minor_stride", "{}", kLane,
     R"([{"name": "x", "shape": [64, 8], "dtype": "float32"}])",
     R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [64], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}], "body": [{"op": "copy_gmem_to_smem",
        "src": {"input": "x", "index": [{"start": 0, "size": 64}, 3]}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}}]}])",
     "finalize", "ValueError",
     "TMA requires the stride of the last dimension after transforming the GMEM reference to be 1, "
     "but it is 8.",
     "launch_context.tma.last_stride"},
    // run: AssertionError in async_copy (cp.async keeps squeezed dims in place).
    {"cp_async_squeezed_minor", "{}", R"({"arch": "sm_80", "semantics": "lane"})",
     R"([{"name": "x", "shape": [128, 8], "dtype": "float32"}])",
     R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128], "dtype": "float32"}],
        "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": 0, "size": 128}, 3]},
        "dst": {"alloc": "dst"}, "oob_mode": "promise_in_bounds"}]}])",
     "lower", "AssertionError", "", "launch_context.squeezed_dims_assert"},
    {"cp_async_with_barrier", "{}", R"({"arch": "sm_80", "semantics": "lane"})", kX,
     copy_scope("[128, 64]", ""), "lower", "ValueError",
     "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, which use the TMA "
     "implementation",
     "lower.cp_async.barrier"},
    // run: the 16-byte stride rule holds for copy_smem_to_gmem's output too.
    {"store_output_stride", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "s", "kind": "smem", "shape": [8, 3], "dtype": "float32"}],
        "body": [{"op": "copy_smem_to_gmem", "src": {"alloc": "s"}, "dst": {"output": "out"}}]}])",
     "lower", "ValueError",
     "async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
     "launch_context.gmem_strides_16b"},
    {"cluster_17", R"({"cluster": [17], "cluster_names": ["x"]})", kLane, kX, "[]", "launch",
     "abort", "cuLaunchKernel failed with invalid cluster size (17, 1, 1): maximum is 16",
     "launch.cluster_size"},
    // run: TMEM dtypes must be 32-bit wide (the message says "narrower" for 64-bit too).
    {"tmem_float64", "{}", R"({"arch": "sm_100a", "semantics": "lane"})", kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "t", "kind": "tmem", "shape": [128, 64], "dtype": "float64"}], "body": []}])",
     "trace", "ValueError",
     "dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout",
     "alloc.tmem.narrow_dtype"},
    // run: the constructor infers the layout of shape[-2:] first.
    {"tmem_1d", "{}", R"({"arch": "sm_100a", "semantics": "lane"})", kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "t", "kind": "tmem", "shape": [128], "dtype": "float32"}], "body": []}])",
     "trace", "ValueError", "TMEM can only represent 2D shapes, got (128,)", "alloc.tmem.rank"},
    // run: batch dims collapse into a 2D TMEM ref.
    {"tmem_3d", "{}", R"({"arch": "sm_100a", "semantics": "lane"})", kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "t", "kind": "tmem", "shape": [2, 128, 64], "dtype": "float32"}], "body": []}])",
     nullptr, nullptr, nullptr, nullptr},
    {"tmem_on_hopper", "{}", kLane, kX,
     R"([{"op": "run_scoped", "allocs": [{"name": "t", "kind": "tmem", "shape": [128, 64], "dtype": "float32"}], "body": []}])",
     "compile", "JaxRuntimeError",
     "ptxas fatal   : Feature 'tcgen05.alloc' requires .target sm_100a",
     "compile.tmem.pre_blackwell"},
};

class LoweringDiagnostics : public ::testing::TestWithParam<Expected> {};

TEST_P(LoweringDiagnostics, AsJaxRaisesIt) {
  const Expected& e = GetParam();
  const std::string outputs = R"([{"name": "out", "shape": [8, 3], "dtype": "float32"}])";
  const Case c = simtest::make_case(e.mesh, e.target, e.inputs, e.program, outputs);
  const LoweringResult r = lower_case(c);
  if (!e.stage) {
    EXPECT_FALSE(r.diagnostic.has_value()) << r.diagnostic->message;
    return;
  }
  ASSERT_TRUE(r.diagnostic.has_value());
  EXPECT_EQ(r.diagnostic->stage, e.stage);
  EXPECT_EQ(r.diagnostic->exception, e.exception);
  EXPECT_EQ(r.diagnostic->message, e.message);
  EXPECT_EQ(r.diagnostic->rule, e.rule);
}

INSTANTIATE_TEST_SUITE_P(Stages, LoweringDiagnostics, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Expected>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace collfuzz::lowering
