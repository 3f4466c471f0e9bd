// Planted bugs of the simulator and lowering (harness/core/mutants.h; the reference's
// interpret-profile ones: tests/reference/interpret_mutant_test.cpp) against the oracles: each
// named mutant, selected at run time in the mutant build, must be caught by the oracle that exists
// to catch it, with the signature a campaign would deduplicate it by. The same case without the
// mutant agrees.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/lowering/mutants.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using lowering::Mutant;

struct Planted {
  Mutant mutant;
  const char* mesh;
  const char* target;
  const char* inputs;
  const char* program;
  const char* signature;  // one mismatch the oracles must report
  const char* outputs = "[]";
};

const char* kLane = R"({"arch": "sm_90a", "semantics": "lane"})";
const char* kBlackwell = R"({"arch": "sm_100a", "semantics": "lane"})";
const char* kX = R"([{"name": "x", "shape": [128, 64], "dtype": "float32"}])";
const char* kX256 = R"([{"name": "x", "shape": [256, 64], "dtype": "float32"}])";
const char* kX384 = R"([{"name": "x", "shape": [384, 64], "dtype": "float32"}])";
const char* kCluster2 = R"({"cluster": [2], "cluster_names": ["x"]})";

// dst f32[128, 64], a barrier, one copy with `extra` fields, then `tail` ops.
std::string copy_program(
    const std::string& extra,
    const std::string& tail = R"(, {"op": "barrier_wait", "barrier": {"alloc": "bar"}})") {
  return R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"})" +
         extra + "}" + tail + "]}]";
}

const std::string kPartitioned =
    copy_program(R"(, "collective_axes": "x", "leader_tracked": {"partitioned": 0})",
                 R"(, {"op": "when", "cond": {"axis": "x", "eq": 0},
                                                    "body": [{"op": "barrier_wait", "barrier": {"alloc": "bar"}}]})");
const std::string kMulticast = copy_program(R"(, "collective_axes": "x")");
// Multicast over "b" (CUDA x) of a row block chosen by "a" (CUDA y): each group loads its own data.
const std::string kMulticastPerGroup =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"axis": "a", "mul": 128}, "size": 128}]},
              "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}, "collective_axes": "b"},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])";
const std::string kPredicated = copy_program(R"(, "predicate": {"axis": "x", "eq": 0})");
const std::string kUnknownAxis = copy_program(R"(, "collective_axes": "q")");
const std::string kOutOfBounds =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"axis": "x", "mul": 96}, "size": 64}]},
              "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}}, {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])";
const std::string kSmall =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [16], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])";
const std::string kMultithreadedEmptyAxes = R"([{"op": "run_scoped", "allocs": [
      {"name": "s", "kind": "smem", "shape": [128], "dtype": "float32"}], "body": []}])";
const std::string kClusterBarrier =
    R"([{"op": "run_scoped", "allocs": [{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x"]}],
    "body": [{"op": "barrier_arrive", "barrier": {"alloc": "cb"}}, {"op": "barrier_wait", "barrier": {"alloc": "cb"}}]}])";

// Two trips, each copying tile i of x (pl.ds(i * 128, 128)) into dst: tile 1 at the end.
const std::string kLoopTiles =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "loop", "trip_count": 2, "index": "i", "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"loop": "i", "mul": 128}, "size": 128}]},
       "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]}])";

// A store of x's first 128 rows into y, then the same tile reduced into it (y = 2x).
const std::string kStoreThenReduce =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
             {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y"}},
             {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y"}, "reduction_op": "add"}]}])";
const char* kY = R"([{"name": "y", "shape": [128, 64], "dtype": "float32"}])";
// Two trips reuse one buffer: tile i in, stored to y's tile i with no wait of its own, then a
// read-only wait that retires the store before the next trip's copy overwrites the buffer.
const std::string kStoreReuse =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "loop", "trip_count": 2, "index": "i", "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"loop": "i", "mul": 64}, "size": 64}]},
       "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
      {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y", "index": [{"start": {"loop": "i", "mul": 64}, "size": 64}]}, "wait": false},
      {"op": "wait_smem_to_gmem", "n": 0, "wait_read_only": true}]}]}])";

// A tile + 1 vector-stored into SMEM, then TMA-stored (its commit_smem fences the vector store).
// y = tile + lax.broadcasted_iota(jnp.int32, (256,), 0) with no layout cast (int32[256]).
const std::string kTilePlusBareIota =
    R"([{"op": "run_scoped", "allocs": [{"name": "tile", "kind": "smem", "shape": [256], "dtype": "int32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tile"}, "barrier": {"alloc": "bar"}},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
             {"op": "vector_store", "dst": {"output": "y"},
              "value": {"add": [{"load": {"alloc": "tile"}}, {"iota": {"dimension": 0, "layout_cast": false}}]}}]}])";
// acc = fori_loop(0, 2, acc + tile, tile); y = acc.
// An nd_loop over a grid of 3 on the 2-CTA cluster: CTA 0 runs 2 trips (tiles 0 and 2), CTA 1 one
// (tile 1); each trip copies its tile and waits.
const std::string kNdLoopUneven =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "nd_loop", "grid": [3], "collective_axes": "x", "index": ["m"], "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"loop": "m", "mul": 128}, "size": 128}]},
       "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]}])";

const std::string kCarriedSum =
    R"([{"op": "run_scoped", "allocs": [{"name": "tile", "kind": "smem", "shape": [256], "dtype": "int32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tile"}, "barrier": {"alloc": "bar"}},
             {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
             {"op": "loop", "trip_count": 2, "carry": {"name": "acc", "dtype": "int32", "shape": [256],
              "init": {"load": {"alloc": "tile"}},
              "next": {"add": [{"carry": "acc"}, {"load": {"alloc": "tile"}}]}}, "body": []},
             {"op": "vector_store", "dst": {"output": "y"}, "value": {"carry": "acc"}}]}])";
const std::string kVectorThenStore =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
      {"op": "vector_store", "dst": {"alloc": "dst"}, "value": {"add": [{"load": {"alloc": "dst"}}, {"const": 1}]}},
      {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y"}}]}])";

// Three trips of double buffering: tile i into dst.at[i % 2] on bars.at[i % 2], then its wait.
const std::string kDoubleBuffered =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [2, 64, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier", "num_barriers": 2}],
    "body": [{"op": "loop", "trip_count": 3, "index": "i", "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": {"loop": "i", "mul": 64}, "size": 64}]},
       "dst": {"alloc": "dst", "index": [{"loop": "i", "mod": 2}]}, "barrier": {"alloc": "bar", "index": {"loop": "i", "mod": 2}}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": {"loop": "i", "mod": 2}}}]}]}])";

// A tiled, 128-byte swizzled f32 buffer filled by TMA and stored back.
const char* kXSwizzled = R"([{"name": "x", "shape": [16, 32], "dtype": "float32"}])";
const char* kYSwizzled = R"([{"name": "y", "shape": [16, 32], "dtype": "float32"}])";
const std::string kSwizzledRoundTrip =
    R"([{"op": "run_scoped", "allocs": [{"name": "dst", "kind": "smem", "shape": [16, 32], "dtype": "float32",
        "transforms": [{"tiling": [8, 32]}, {"swizzle": 128}]}, {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar", "index": 0}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
      {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y"}}]}])";

// try_cluster_cancel(res, bar.at[0], collective_axes=("x",)) and its wait on the 2-CTA cluster:
// CTA 0 alone issues, each CTA's barrier gets its one response.
// Each CTA loads its row of x, syncs the cluster, and stores the peer's row into y (JAX's
// test_cluster_ref_read on an untransformed buffer).
const std::string kClusterRefRead =
    R"([{"op": "run_scoped", "allocs": [{"name": "smem", "kind": "smem", "shape": [256], "dtype": "float32"},
      {"name": "bar", "kind": "barrier", "num_barriers": []},
      {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"]}],
    "body": [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"axis": "x"}]}, "dst": {"alloc": "smem"}, "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
      {"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
      {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}},
      {"op": "vector_store", "dst": {"output": "y", "index": [{"axis": "x"}]},
       "value": {"load": {"alloc": "smem", "cluster": {"x": {"axis": "x", "mul": -1, "add": 1}}}}}]}])";

// Each CTA stores x[i] + 1 into the peer's SMEM, syncs the cluster, and stores its own SMEM to y.
const std::string kClusterRefWrite =
    R"([{"op": "run_scoped", "allocs": [{"name": "smem", "kind": "smem", "shape": [256], "dtype": "float32"},
      {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"]}],
    "body": [
      {"op": "vector_store", "dst": {"alloc": "smem", "cluster": {"x": {"axis": "x", "mul": -1, "add": 1}}},
       "value": {"add": [{"load": {"input": "x", "index": [{"axis": "x"}]}}, {"const": 1}]}},
      {"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
      {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}},
      {"op": "vector_store", "dst": {"output": "y", "index": [{"axis": "x"}]}, "value": {"load": {"alloc": "smem"}}}]}])";

// `y[...] = tile[...] + 1` of a tiled, 128-byte swizzled f32 tile that TMA filled from x.
const std::string kTiledVectorLoad =
    R"([{"op": "run_scoped", "allocs": [{"name": "tile", "kind": "smem", "shape": [64, 32], "dtype": "float32",
        "transforms": [{"tiling": [8, 32]}, {"swizzle": 128}]}, {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tile"}, "barrier": {"alloc": "bar", "index": 0}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
      {"op": "vector_store", "dst": {"output": "y"}, "value": {"add": [{"load": {"alloc": "tile"}}, {"const": 1}]}}]}])";

const std::string kClusterCancel =
    R"([{"op": "run_scoped", "allocs": [{"name": "res", "kind": "smem", "shape": [16], "dtype": "uint8"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "try_cluster_cancel", "result": {"alloc": "res"}, "barrier": {"alloc": "bar", "index": 0},
              "collective_axes": ["x"]},
             {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}]}])";

// A copy through a 3-cycle transpose (1, 2, 0, 3) of equal dims (the wrong permutation keeps
// the shapes): the inverse is another permutation.
const std::string kTransposedCopy =
    R"([{"op": "run_scoped", "allocs": [{"name": "buf", "kind": "smem", "shape": [2, 2, 2, 64], "dtype": "int32"},
      {"name": "bar", "kind": "barrier"}],
    "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "buf", "transpose": [1, 2, 0, 3]},
              "barrier": {"alloc": "bar", "index": 0}},
             {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
             {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"}, "dst": {"output": "y"}}]}])";

const Planted kPlanted[] = {
    // The three the issue names: bytes, memory, diagnostics.
    {Mutant::kLeaderBytesNotDoubled, kCluster2, kBlackwell, kX256, kPartitioned.c_str(),
     "bytes:over_completion:copy_partitioned:sim"},
    {Mutant::kPartitionHalvesSwapped, kCluster2, kBlackwell, kX256, kPartitioned.c_str(),
     "memory:data:copy_partitioned:sim"},
    {Mutant::kThreadAxisCheckSkipped, R"({"num_threads": 2, "thread_name": "wg"})", kLane, kX,
     kMultithreadedEmptyAxes.c_str(),
     "diagnostic:accepted_not_rejected:lower.scoped.multithreaded_needs_collective:sim"},
    // The rest of the named mutants.
    {Mutant::kMaskPallasOrder, R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})", kLane, kX256,
     kMulticastPerGroup.c_str(), "memory:data:copy_multicast:sim"},
    {Mutant::kChunkSplitWrongDim, kCluster2, kLane, kX, kMulticast.c_str(),
     "memory:data:copy_multicast:sim"},
    {Mutant::kExpectTxTruncated, "{}", R"({"arch": "sm_90a", "semantics": "warpgroup"})",
     R"([{"name": "x", "shape": [16], "dtype": "float32"}])", kSmall.c_str(),
     "bytes:over_completion:copy:sim"},
    {Mutant::kPredicateIgnored, kCluster2, kLane, kX, kPredicated.c_str(), "memory:data:copy:sim"},
    {Mutant::kUnknownAxisListNotReversed, R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})",
     kLane, kX, kUnknownAxis.c_str(), "diagnostic:message:lower.copy.unknown_cluster_axis:sim"},
    {Mutant::kOobFillNotZero, kCluster2, kLane, kX, kOutOfBounds.c_str(), "memory:data:copy:sim"},
    {Mutant::kNonLeaderBarrierArmed, kCluster2, kBlackwell, kX256, kPartitioned.c_str(),
     "bytes:wrong_barrier:copy_partitioned:sim"},
    {Mutant::kMulticastSkipsSelf, kCluster2, kLane, kX, kMulticast.c_str(),
     "bytes:would_hang:copy_multicast:sim"},
    {Mutant::kClusterBarrierCountOffByOne, kCluster2, kLane, kX, kClusterBarrier.c_str(),
     "bytes:count:barrier_arrive:sim"},
    {Mutant::kLoopIndexFrozen, kCluster2, kLane, kX256, kLoopTiles.c_str(), "memory:data:copy:sim"},
    {Mutant::kBarrierSlotShifted, "{}", kLane, kX256, kDoubleBuffered.c_str(),
     "bytes:arrivals:copy:sim"},
    {Mutant::kStoreReductionIgnored, "{}", kLane, kX, kStoreThenReduce.c_str(),
     "memory:output:copy_smem_to_gmem:sim", kY},
    {Mutant::kStoreWaitGroupOffByOne, "{}", kLane, kX, kStoreReuse.c_str(),
     "memory:output:copy_smem_to_gmem:sim", kY},
    {Mutant::kCommitSmemDropped, "{}", kLane, kX, kVectorThenStore.c_str(),
     "memory:output:copy_smem_to_gmem:sim", kY},
    // Trip 2 waits on slot 0's parity 0 again: phase 2 (parity 0) has completed by then in the
    // simulator, so the wait sees it as the phase before and never returns.
    {Mutant::kWaitPhaseNotFlipped, "{}", kLane, kX256, kDoubleBuffered.c_str(),
     "bytes:wait_hangs:barrier_wait:sim"},
    // The load lands unswizzled while the store reads swizzled: the SMEM bytes and the output.
    {Mutant::kSwizzleLoadIgnored, "{}", kLane, kXSwizzled, kSwizzledRoundTrip.c_str(),
     "memory:data:copy:sim", kYSwizzled},
    // Lane takes the bare iota for one cast to the strided layout: the kernel completes.
    {Mutant::kIotaUncastAccepted, "{}", kLane,
     R"([{"name": "x", "shape": [256], "dtype": "int32"}])", kTilePlusBareIota.c_str(),
     "diagnostic:accepted_not_rejected:lower.vector.iota_uncast:sim",
     R"([{"name": "y", "shape": [256], "dtype": "int32"}])"},
    // The carry keeps the tile: y = x where 3x is predicted.
    {Mutant::kCarryNextIgnored, "{}", kLane,
     R"([{"name": "x", "shape": [256], "dtype": "int32", "fill": {"pattern": "arange", "step": 1}}])",
     kCarriedSum.c_str(), "memory:output:copy_smem_to_gmem:sim",
     R"([{"name": "y", "shape": [256], "dtype": "int32"}])"},
    // CTA 1 runs a second trip (step 3 wraps to tile 0): one phase more than predicted.
    {Mutant::kNdLoopTripsRoundedUp, kCluster2, kLane, kX384, kNdLoopUneven.c_str(),
     "bytes:phases:copy:sim"},
    {Mutant::kClusterCancelEveryCta, kCluster2, kBlackwell, "[]", kClusterCancel.c_str(),
     "bytes:final_state:try_cluster_cancel:sim"},
    // Each CTA stores its own row: y = x where the flip is predicted.
    {Mutant::kClusterRefReadsOwnSmem, kCluster2, kLane,
     R"([{"name": "x", "shape": [2, 256], "dtype": "float32"}])", kClusterRefRead.c_str(),
     "memory:output:copy_smem_to_gmem:sim",
     R"([{"name": "y", "shape": [2, 256], "dtype": "float32"}])"},
    // Each CTA stores x[i] + 1 into its own SMEM: y = x + 1 where the flip is predicted.
    {Mutant::kClusterRefWritesOwnSmem, kCluster2, kLane,
     R"([{"name": "x", "shape": [2, 256], "dtype": "float32"}])", kClusterRefWrite.c_str(),
     "memory:output:copy_smem_to_gmem:sim",
     R"([{"name": "y", "shape": [2, 256], "dtype": "float32"}])"},
    // The tile read unswizzled: y holds x's rows with their 16-byte chunks permuted, + 1.
    {Mutant::kTiledVectorLoadUnswizzled, "{}", kLane,
     R"([{"name": "x", "shape": [64, 32], "dtype": "float32"}])", kTiledVectorLoad.c_str(),
     "memory:output:copy_smem_to_gmem:sim",
     R"([{"name": "y", "shape": [64, 32], "dtype": "float32"}])"},
    // The buffer holds x permuted the wrong way round: y = x.transpose((1, 2, 0, 3)) where
    // x.transpose((2, 0, 1, 3)) is predicted.
    {Mutant::kTransposeNotInverted, "{}", kLane,
     R"([{"name": "x", "shape": [2, 2, 2, 64], "dtype": "int32"}])", kTransposedCopy.c_str(),
     "memory:output:copy_smem_to_gmem:sim",
     R"([{"name": "y", "shape": [2, 2, 2, 64], "dtype": "int32"}])"},
};

std::vector<std::string> signatures(const Case& c) {
  sim::Simulator simulator;
  Outcome actual = simulator.run(c);
  actual.executor = "sim";
  const Outcome expected = predict(c, Profile::kMosaic).outcome;
  std::vector<std::string> out;
  for (const Mismatch& m : compare(c, expected, actual).mismatches) out.push_back(m.signature);
  return out;
}

class PlantedBug : public ::testing::TestWithParam<Planted> {
 protected:
  void TearDown() override { lowering::set_active_mutant(Mutant::kNone); }
};

TEST_P(PlantedBug, IsCaughtByTheRightOracle) {
  const Planted& p = GetParam();
  const Case c = simtest::make_case(p.mesh, p.target, p.inputs, p.program, p.outputs);
  lowering::set_active_mutant(Mutant::kNone);
  EXPECT_TRUE(signatures(c).empty()) << "the faithful model must agree on this case";
  lowering::set_active_mutant(p.mutant);
  const std::vector<std::string> found = signatures(c);
  EXPECT_NE(std::find(found.begin(), found.end(), p.signature), found.end())
      << lowering::mutant_name(p.mutant) << " not caught as " << p.signature << "; got "
      << ::testing::PrintToString(found);
}

INSTANTIATE_TEST_SUITE_P(Mutants, PlantedBug, ::testing::ValuesIn(kPlanted),
                         [](const ::testing::TestParamInfo<Planted>& i) {
                           return std::string(lowering::mutant_name(i.param.mutant));
                         });

// Every lowering and simulator mutant is killed by the corpus as it stands: some corpus case (or
// JAX probe) gets a signature under the mutant that the faithful simulator does not give it.
TEST(Mutants, TheCorpusKillsEveryLoweringMutant) {
  std::vector<Case> cases;
  for (const char* dir : {"corpus", "corpus-jax-probes"}) {
    const std::filesystem::path root = std::filesystem::path(COLLFUZZ_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(root)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (!e.is_regular_file() || e.path().extension() != ".json") continue;
      try {
        Case c = load_case_file(e.path());
        if (c.target.profile == Profile::kMosaic) cases.push_back(std::move(c));
      } catch (const std::exception&) {  // a hostile-input case, or not a case
      }
    }
  }
  if (cases.empty()) GTEST_SKIP() << "no corpus";
  lowering::set_active_mutant(Mutant::kNone);
  std::vector<std::vector<std::string>> faithful;
  for (const Case& c : cases) faithful.push_back(signatures(c));
  for (int m = 1; m < static_cast<int>(kFirstInterpretMutant); ++m) {
    const auto mutant = static_cast<Mutant>(m);
    lowering::set_active_mutant(mutant);
    int kills = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      for (const std::string& s : signatures(cases[i])) {
        kills += std::find(faithful[i].begin(), faithful[i].end(), s) == faithful[i].end();
      }
    }
    EXPECT_GT(kills, 0) << lowering::mutant_name(mutant) << " survives the corpus";
  }
  lowering::set_active_mutant(Mutant::kNone);
}

TEST(Mutants, EveryNamedMutantHasAPlantedBugTest) {
  for (int m = 1; m < static_cast<int>(kFirstInterpretMutant); ++m) {
    const auto mutant = static_cast<Mutant>(m);
    const bool covered = std::any_of(std::begin(kPlanted), std::end(kPlanted),
                                     [&](const Planted& p) { return p.mutant == mutant; });
    EXPECT_TRUE(covered) << lowering::mutant_name(mutant);
    EXPECT_EQ(lowering::parse_mutant(lowering::mutant_name(mutant)), mutant);
  }
}

}  // namespace
}  // namespace collfuzz
