// The SMEM layout and the mbarrier pools: a stack of 1024-aligned allocations that sibling
// run_scopeds reuse, the mbarriers after the scratch, one group per estimated barrier, pooled by
// barrier type across siblings as ModuleContext.reserve_barrier does, and the hardware counts.
#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.h"

namespace collfuzz::lowering {
namespace {

using simtest::make_case;

const char* kInput = R"([{"name": "x", "shape": [8, 64], "dtype": "float32"}])";

std::int64_t buffer_offset(const Plan& p, const std::string& name) {
  for (const BufferInfo& b : p.buffers) {
    if (p.strings[static_cast<std::size_t>(b.alloc)] == name) return b.smem_offset;
  }
  return -1;
}

std::int32_t record_mbarrier(const Plan& p, const std::string& name, std::int64_t index = 0) {
  for (const BarrierRecordInfo& r : p.barrier_records) {
    if (p.strings[static_cast<std::size_t>(r.alloc)] == name && r.index == index) return r.mbarrier;
  }
  return -1;
}

TEST(Layout, StackOfAlignedAllocationsReusedBySiblings) {
  const Plan p = simtest::lower_ok(make_case("{}", simtest::kLane, kInput, R"([
    {"op": "run_scoped", "allocs": [
        {"name": "a", "kind": "smem", "shape": [100], "dtype": "uint8"},
        {"name": "b", "kind": "smem", "shape": [300], "dtype": "float32"}],
     "body": [{"op": "run_scoped", "allocs": [{"name": "c", "kind": "smem", "shape": [8], "dtype": "uint8"}], "body": []}]},
    {"op": "run_scoped", "allocs": [{"name": "d", "kind": "smem", "shape": [4096], "dtype": "uint8"}], "body": []}])"));
  EXPECT_EQ(buffer_offset(p, "a"), 0);
  EXPECT_EQ(buffer_offset(p, "b"), 1024);
  EXPECT_EQ(buffer_offset(p, "c"), 1024 + 2048);
  EXPECT_EQ(buffer_offset(p, "d"), 0);    // the sibling starts where the first one started
  EXPECT_EQ(p.smem_scratch_bytes, 4096);  // max(1024 + 2048 + 1024, 4096)
}

TEST(Layout, MbarriersFollowTheScratchAndSiblingsShareThemByType) {
  const Plan p = simtest::lower_ok(make_case("{}", simtest::kLane, kInput, R"([
    {"op": "run_scoped", "allocs": [{"name": "s", "kind": "smem", "shape": [256], "dtype": "float32"},
                                    {"name": "b1", "kind": "barrier"}], "body": []},
    {"op": "run_scoped", "allocs": [{"name": "b2", "kind": "barrier"},
                                    {"name": "b3", "kind": "barrier", "num_arrivals": 2}], "body": []}])"));
  ASSERT_EQ(p.mbarriers.size(), 2u);  // Counter: Barrier(128) max(1, 1) = 1, Barrier(256) 1
  EXPECT_EQ(p.mbarriers[0].smem_offset, 1024);
  EXPECT_EQ(p.mbarriers[1].smem_offset, 1032);
  EXPECT_EQ(p.smem_bytes, 1024 + 16);
  EXPECT_EQ(record_mbarrier(p, "b1"), record_mbarrier(p, "b2"));  // reused by the sibling
  EXPECT_NE(record_mbarrier(p, "b2"), record_mbarrier(p, "b3"));
  EXPECT_EQ(p.mbarriers[static_cast<std::size_t>(record_mbarrier(p, "b3"))].arrival_count, 256);
}

TEST(Layout, NestedScopesOfOneTypeGetDistinctGroupsPoppedFromTheBack) {
  const Plan p = simtest::lower_ok(make_case("{}", simtest::kLane, kInput, R"([
    {"op": "run_scoped", "allocs": [{"name": "outer", "kind": "barrier", "num_barriers": 2}],
     "body": [{"op": "run_scoped", "allocs": [{"name": "inner", "kind": "barrier", "num_barriers": 2}], "body": []}]},
    {"op": "run_scoped", "allocs": [{"name": "later", "kind": "barrier", "num_barriers": 2}], "body": []}])"));
  ASSERT_EQ(p.mbarriers.size(), 4u);  // two groups of two
  // reserve_barrier pops the last group: the outer scope gets group 1, the inner one group 0.
  EXPECT_EQ(record_mbarrier(p, "outer"), 2);
  EXPECT_EQ(record_mbarrier(p, "outer", 1), 3);
  EXPECT_EQ(record_mbarrier(p, "inner"), 0);
  // Both went back (inner first), so the sibling gets the outer's group again.
  EXPECT_EQ(record_mbarrier(p, "later"), 2);
}

TEST(Layout, HardwareArrivalCounts) {
  const std::string program = R"([{"op": "run_scoped", "allocs": [
      {"name": "b", "kind": "barrier", "num_arrivals": 3},
      {"name": "t", "kind": "barrier", "num_arrivals": 3, "orders_tensor_core": true},
      {"name": "c", "kind": "cluster_barrier", "collective_axes": ["x", "y"], "num_arrivals": 2},
      {"name": "g", "kind": "cluster_barrier", "collective_axes": [["x", "y"]]},
      {"name": "l", "kind": "cluster_barrier", "collective_axes": ["y"], "leader_tracked": true, "num_arrivals": 5}],
    "body": []}])";
  for (const char* target : {simtest::kLane, simtest::kWarpgroup}) {
    const Plan p = simtest::lower_ok(
        make_case(R"({"cluster": [2, 4], "cluster_names": ["x", "y"]})", target, kInput, program));
    const auto count = [&](const std::string& name) {
      return p.mbarriers[static_cast<std::size_t>(record_mbarrier(p, name))].arrival_count;
    };
    EXPECT_EQ(count("b"), 3 * 128);              // num_arrivals * 128 under both semantics
    EXPECT_EQ(count("t"), 3);                    // orders_tensor_core: num_arrivals
    EXPECT_EQ(count("c"), 2 * (2 + 4 - 2 + 1));  // num_arrivals * (sum(sizes) - len(dims) + 1)
    EXPECT_EQ(count("g"), 1 * (8 - 1 + 1));      // one grouped entry of size 8
    EXPECT_EQ(count("l"), 5 * 4);                // leader-tracked: num_arrivals * size
  }
}

}  // namespace
}  // namespace collfuzz::lowering
