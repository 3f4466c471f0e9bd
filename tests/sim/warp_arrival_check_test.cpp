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
// Barrier(num_arrivals).
Case warp_copies(std::int64_t warps, std::int64_t num_arrivals) {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) +
                   "/corpus/run.mbarrier.nocomplete_completes__every_warp_one_arrival.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("expect");
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

}  // namespace
}  // namespace collfuzz
