// Racing SMEM writes (oracles/reference/smem_races.h): bytes two writers leave with different
// values are undefined in the prediction; writes of one writer, or of the same value, are not.
#include <gtest/gtest.h>

#include <array>

#include "oracles/reference/smem_races.h"
#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

TEST(SmemRaces, TwoWritersWithDifferentValuesRaceAndTheMarkSticks) {
  std::array<std::uint16_t, 2> writers{};
  std::array<std::uint8_t, 2> undef{};
  std::array<std::uint8_t, 2> before{0xA5, 0xA5};
  std::array<std::uint8_t, 2> now{1, 2};
  // Writer 1 writes both bytes; writes them again with other values: one writer, no race.
  EXPECT_FALSE(
      ref::settle_smem_write(writers.data(), undef.data(), before.data(), now.data(), 2, 1));
  before = now;
  now = {3, 4};
  EXPECT_FALSE(
      ref::settle_smem_write(writers.data(), undef.data(), before.data(), now.data(), 2, 1));
  // Writer 2 writes byte 0 with its value (unchanged) and byte 1 with another: byte 1 races.
  before = now;
  now = {3, 9};
  EXPECT_TRUE(
      ref::settle_smem_write(writers.data(), undef.data(), before.data(), now.data(), 2, 2));
  EXPECT_EQ(undef[0], 0);
  EXPECT_EQ(undef[1], 1);
  // A later write by writer 2 (which clears the undefined mark as a defined write) leaves byte 1
  // racy: writer 1's write may still land after it.
  undef[1] = 0;
  before = now;
  now = {3, 7};
  EXPECT_TRUE(
      ref::settle_smem_write(writers.data(), undef.data(), before.data(), now.data(), 2, 2));
  EXPECT_EQ(undef[1], 1);
  EXPECT_EQ(writers[1], ref::kSmemRacy);
}

// Two Pallas threads of each CTA copy into one thread-collective buffer: `dst` from row
// `src_row` of x, `same` from row 0.
json two_threads_copy(const json& src_row) {
  json mesh = {
      {"cluster", {2}}, {"cluster_names", {"x"}}, {"num_threads", 2}, {"thread_name", "wg"}};
  json body = {copy({{"src", {{"input", "x"}, {"index", {src_row}}}}}),
               copy({{"src", {{"input", "x"}, {"index", {0}}}}, {"dst", {{"alloc", "same"}}}}),
               wait()};
  json c =
      make_case(mesh, {smem("dst", {64}), smem("same", {64}), barrier("bar", 4)}, body, {2, 64});
  c["program"][0]["collective_axes"] = {"wg"};
  return c;
}

const BufferRecord* buffer_of(const Outcome& o, std::int64_t rank, const std::string& alloc) {
  for (const auto& cta : o.ctas) {
    if (cta.rank != rank) continue;
    for (const auto& b : cta.buffers) {
      if (b.alloc == alloc) return &b;
    }
  }
  return nullptr;
}

TEST(SmemRaces, ThreadsCopyingDifferentRowsIntoOneBufferLeaveItUndefined) {
  for (const Profile profile : {Profile::kMosaic, Profile::kInterpret}) {
    const Outcome racy =
        outcome_of(two_threads_copy({{"axis", "wg"}, {"mul", 1}, {"add", 0}}), profile);
    ASSERT_TRUE(racy.accepted()) << to_string(racy.kind);
    for (std::int64_t r = 0; r < 2; ++r) {
      ASSERT_TRUE(buffer_of(racy, r, "dst"));
      EXPECT_TRUE(buffer_of(racy, r, "dst")->undefined) << "CTA " << r;
      EXPECT_FALSE(buffer_of(racy, r, "same")->undefined) << "CTA " << r;  // same values
    }
    // Both threads copy row 1: same values, no race.
    const Outcome calm = outcome_of(two_threads_copy(1), profile);
    ASSERT_TRUE(calm.accepted());
    EXPECT_FALSE(buffer_of(calm, 0, "dst")->undefined);
  }
}

TEST(SmemRaces, AMulticastsChunksFromEachCtaDoNotRace) {
  // Each CTA of the cluster loads one half and multicasts it: two writers per destination, on
  // disjoint bytes.
  const json c = make_case({{"cluster", {2}}, {"cluster_names", {"x"}}},
                           {smem("dst", {2, 64}), barrier("bar")},
                           {copy({{"collective_axes", {"x"}}}), wait()}, {2, 64});
  const Outcome o = outcome_of(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_FALSE(buffer_of(o, 0, "dst")->undefined);
  EXPECT_FALSE(buffer_of(o, 1, "dst")->undefined);
}

TEST(SmemRaces, ASiblingScopeReusingTheBytesStartsWithoutWriters) {
  // Scope 1: thread 0 copies row 0 into a; scope 2 reuses a's bytes for b, which thread 1 fills
  // with row 1. The scopes are ordered (the block syncs between them): b is defined.
  json mesh = {{"num_threads", 2}, {"thread_name", "wg"}};
  json scope1 = {
      {"op", "run_scoped"},
      {"collective_axes", {"wg"}},
      {"allocs", {smem("a", {64}), barrier("bar")}},
      {"body",
       {when({{"axis", "wg"}, {"eq", 0}},
             {copy({{"src", {{"input", "x"}, {"index", {0}}}}, {"dst", {{"alloc", "a"}}}}),
              wait()})}}};
  json scope2 = {
      {"op", "run_scoped"},
      {"collective_axes", {"wg"}},
      {"allocs", {smem("b", {64}), barrier("bar2")}},
      {"body",
       {when({{"axis", "wg"}, {"eq", 1}}, {copy({{"src", {{"input", "x"}, {"index", {1}}}},
                                                 {"dst", {{"alloc", "b"}}},
                                                 {"barrier", {{"alloc", "bar2"}}}}),
                                           wait("bar2")})}}};
  json c = make_case(mesh, json::array(), json::array(), {2, 64});
  c["program"] = {scope1, scope2};
  // (Thread 1's wait deadlocks: bar2 reuses bar's mbarrier, whose phase 0 thread 1 never waited
  // for; the buffers are what this test is about.)
  const Outcome o = outcome_of(c);
  ASSERT_TRUE(o.accepted()) << to_string(o.kind);
  EXPECT_FALSE(buffer_of(o, 0, "a")->undefined);
  EXPECT_FALSE(buffer_of(o, 0, "b")->undefined);
}

}  // namespace
}  // namespace collfuzz::testing
