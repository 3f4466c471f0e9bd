// The simulator's own check of a warp_map's entry (harness/lowering/plan.h WarpArrivalCheckOp):
// every warp copying into a Barrier whose phase needs fewer Pallas arrivals than the warps that
// copy is undefined behaviour (run.mbarrier.nocomplete_completes), met by the simulator from the
// plan's arrivals, not from the reference's.
#include <fstream>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

// `warps` warps of the corpus case's warp_map copy (`when(warp < warps)`) onto
// Barrier(num_arrivals), under `semantics`.
Case warp_copies(std::int64_t warps, std::int64_t num_arrivals,
                 const std::string& semantics = "lane") {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) +
                   "/corpus/run.mbarrier.nocomplete_completes__every_warp_one_arrival.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("expect");
  j["target"]["semantics"] = semantics;
  auto& scope = j["program"][0];
  scope["allocs"][1]["num_arrivals"] = num_arrivals;
  const nlohmann::json copy = scope["body"][0]["body"][0];
  scope["body"][0]["body"] = nlohmann::json::array(
      {{{"op", "when"}, {"cond", {{"axis", "warp"}, {"lt", warps}}}, {"body", {copy}}}});
  return case_from_json(j);
}

TEST(WarpArrivalCheck, ThePlanCarriesOneCheckPerWarpMapEntry) {
  const lowering::Plan plan = simtest::lower_ok(warp_copies(4, 1));
  ASSERT_EQ(plan.warp_checks.size(), 1u);
  ASSERT_EQ(plan.warp_checks[0].barriers.size(), 1u);
  const auto& warps = plan.warp_checks[0].barriers[0].warps;
  ASSERT_EQ(warps.size(), 4u);
  for (const auto& w : warps) {
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0].hardware, 96);
    EXPECT_TRUE(w[0].no_complete);
    EXPECT_EQ(w[1].hardware, 32);
    EXPECT_FALSE(w[1].no_complete);
  }
}

TEST(WarpArrivalCheck, TheSimulatorMeetsItExactlyWhenMoreWarpsCopyThanThePhaseNeeds) {
  for (std::int64_t w = 1; w <= 4; ++w) {
    for (std::int64_t n = 1; n <= 4; ++n) {
      sim::Simulator simulator;
      const Outcome o = simulator.run(warp_copies(w, n));
      EXPECT_EQ(o.kind == OutcomeKind::kUndefined, w > n)
          << w << " warps, num_arrivals " << n << ": " << to_string(o.kind);
      if (o.kind == OutcomeKind::kUndefined) {
        EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMbarrierNoCompleteCompletes);
        EXPECT_EQ(o.undefined->op, "$.program[0].body[0].body[0].body[0]");
      }
      // And the reference agrees, by its own walk.
      simtest::predicted_and_simulated(warp_copies(w, n));
    }
  }
}

// Under Warpgroup semantics the warp_map is the mosaic_gpu dialect's WarpMapOp, whose dialect
// lowering arms a warp's copy as Lane's Pallas lowering does (each lane arrive(3, no-complete),
// then arrive_expect_tx): the same counts, the same undefined behaviour.
TEST(WarpArrivalCheck, WarpgroupSemanticsCountsAWarpsCopyAsLaneDoes) {
  for (std::int64_t w = 1; w <= 4; ++w) {
    for (std::int64_t n = 1; n <= 4; ++n) {
      const Outcome lane = simtest::predicted_and_simulated(warp_copies(w, n, "lane"));
      const Outcome wg = simtest::predicted_and_simulated(warp_copies(w, n, "warpgroup"));
      EXPECT_EQ(lane.kind, wg.kind) << w << " warps, num_arrivals " << n;
      const lowering::Plan plan = simtest::lower_ok(warp_copies(w, n, "warpgroup"));
      ASSERT_EQ(plan.warp_checks.size(), 1u);
      EXPECT_EQ(plan.warp_checks[0].barriers[0].warps.size(), static_cast<std::size_t>(w));
    }
  }
}

// A warp's copy of bytes that do not divide by 128: Lane's Pallas lowering refuses it, the
// dialect's arms it (uniformly over 32 lanes, or from one lane: arith.select); the reference and
// the simulator agree on both, and on the bytes armed.
TEST(WarpArrivalCheck, OnlyLaneRefusesAWarpsCopyOfBytesThatDoNotDivideBy128) {
  for (const std::int64_t elements : {4, 8}) {
    for (const char* semantics : {"lane", "warpgroup"}) {
      std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/warp.copy__one_warp.json");
      nlohmann::json j = nlohmann::json::parse(in);
      j.erase("expect");
      j["target"]["semantics"] = semantics;
      j["inputs"][0]["shape"] = {elements};
      j["program"][0]["allocs"][0]["shape"] = {elements};
      const Outcome o = simtest::predicted_and_simulated(case_from_json(j));
      if (std::string(semantics) == "lane") {
        ASSERT_EQ(o.kind, OutcomeKind::kRejected);
        EXPECT_EQ(o.diagnostic->rule, "lower.lane.bytes_multiple_of_128");
      } else {
        ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << to_string(o.kind);
        const BarrierRecord* b = simtest::barrier(simtest::cta(o, 0), "bar", 0);
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(b->armed, elements * 4);
        EXPECT_EQ(b->received, elements * 4);
        EXPECT_EQ(b->arrivals, 1);
      }
    }
  }
}

}  // namespace
}  // namespace collfuzz
