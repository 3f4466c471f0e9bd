// explain's helpers: the first barrier that does not balance, and element values.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/runner/barrier_imbalance.h"
#include "harness/runner/element_values.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

std::optional<BarrierImbalance> imbalance_of(const std::string& file, Profile p) {
  const Case c = load_case_file(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/" + file);
  return first_unbalanced_barrier(c, predict(c, p).outcome);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(BarrierImbalance, LeaderTrackedCopyLeavesTheNonLeaderWaiting) {
  const auto b = imbalance_of("deadlock.partitioned__non_leader_waits.json", Profile::kMosaic);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rank, 1);
  EXPECT_EQ(b->barrier, "bar[0]");
  ASSERT_EQ(b->stuck.size(), 1u);
  EXPECT_NE(joined(b->findings).find("1 of 1 arrival(s) missing"), std::string::npos);
  ASSERT_EQ(b->contributors.size(), 1u);
  EXPECT_EQ(b->contributors[0].op, "$.program[0].body[0]");
  EXPECT_NE(b->contributors[0].what.find("PARTITIONED(0)"), std::string::npos);
}

TEST(BarrierImbalance, PartialMulticastLeavesBytesArmed) {
  const auto b = imbalance_of("deadlock.multicast__partial_group_when.json", Profile::kMosaic);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->record);
  EXPECT_GT(*b->record->armed, *b->record->received);
  EXPECT_NE(joined(b->findings).find("B armed (expect_tx) but never received"), std::string::npos);
}

TEST(BarrierImbalance, AnUnevenNdLoopNamesEachCtasTripsAndTheArrivalInsideIt) {
  const auto b = imbalance_of("deadlock.nd_loop__uneven_grid_cluster_sync.json", Profile::kMosaic);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rank, 0);
  EXPECT_EQ(b->barrier, "cbar[0]");
  EXPECT_NE(joined(b->findings).find("(CTA 0: 2, CTA 1: 1)"), std::string::npos)
      << joined(b->findings);
  EXPECT_NE(joined(b->findings).find("3 // 2 + (axis_index < 1)"), std::string::npos);
  // The arrival sits in the loop's body: listed, once per trip.
  ASSERT_EQ(b->contributors.size(), 1u);
  EXPECT_EQ(b->contributors[0].op, "$.program[0].body[0].body[3]");
  EXPECT_NE(b->contributors[0].here.find("once per trip of the nd_loop"), std::string::npos);
}

TEST(BarrierImbalance, NoneWhenEverythingBalances) {
  EXPECT_FALSE(imbalance_of("interpret.mode.plain__cluster2.json", Profile::kMosaic));
}

TEST(ElementValues, Numbers) {
  // float32 1.5, -2 (little-endian)
  const std::vector<std::uint8_t> f32 = {0, 0, 0xC0, 0x3F, 0, 0, 0, 0xC0};
  EXPECT_EQ(elements_text(f32, DType::kFloat32, 2), "[1.5, -2]");
  // int4: 1, -1, 7 (low nibble first)
  const std::vector<std::uint8_t> i4 = {0xF1, 0x07};
  EXPECT_EQ(elements_text(i4, DType::kInt4, 3), "[1, -1, 7]");
  // bfloat16 1.0 = 0x3F80; float16 -2.0 = 0xC000
  EXPECT_EQ(elements_text({0x80, 0x3F}, DType::kBFloat16, 1), "[1]");
  EXPECT_EQ(elements_text({0x00, 0xC0}, DType::kFloat16, 1), "[-2]");
  // the SMEM sentinel in a 4-byte element
  EXPECT_EQ(elements_text({0xA5, 0xA5, 0xA5, 0xA5}, DType::kInt32, 1), "[~]");
  // long arrays: the first 8 and the count
  const std::vector<std::uint8_t> many(40, 1);
  EXPECT_EQ(elements_text(many, DType::kUInt8, 40), "[1, 1, 1, 1, 1, 1, 1, 1, ...] (40 elements)");
}

}  // namespace
}  // namespace collfuzz
