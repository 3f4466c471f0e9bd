// Loops with a static trip count (docs/case-format.md, "loop"): the reference predicts each trip's
// phase of a reused barrier, and the simulator, running the lowering's unrolled plan, agrees.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/sim/simulator.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::kWait;

// A cluster of two CTAs; one run_scoped with dst f32[128,64] and barrier `bar` holding `body`.
json loop_case(const json& body) {
  json j = json::parse(R"({
    "format": 1, "name": "loop",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a", "semantics": "warpgroup"},
    "inputs": [{"name": "src", "shape": [128, 64], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
        {"name": "bar", "kind": "barrier", "num_arrivals": 1}], "body": []}]
  })");
  j["program"][0]["body"] = body;
  return j;
}

const json kCopy = json::parse(
    R"({"op": "copy_gmem_to_smem", "src": {"input": "src"}, "dst": {"alloc": "dst"},
        "barrier": {"alloc": "bar", "index": 0}, "collective_axes": "x"})");

json loop(std::int64_t trips, const json& body) {
  return json{{"op", "loop"}, {"trip_count", trips}, {"body", body}};
}

// The reference's outcome, after checking that the simulator agrees with it.
Outcome predicted_and_simulated(const json& j) {
  return simtest::predicted_and_simulated(case_from_json(j));
}

TEST(Loop, ABarrierReusedAcrossTripsCompletesOnePhasePerTrip) {
  const Outcome o =
      predicted_and_simulated(loop_case(json::array({loop(3, json::array({kCopy, kWait}))})));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  ASSERT_EQ(o.ctas.size(), 2u);
  for (const CtaRecord& cta : o.ctas) {
    ASSERT_EQ(cta.barriers.size(), 1u);
    EXPECT_EQ(cta.barriers[0].phases, 3);
    EXPECT_EQ(cta.barriers[0].armed, 3 * 128 * 64 * 4);
    EXPECT_EQ(cta.barriers[0].received, 3 * 128 * 64 * 4);
    ASSERT_EQ(cta.waits.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(cta.waits[i].phase, static_cast<std::int64_t>(i));
      EXPECT_TRUE(cta.waits[i].completed);
      EXPECT_EQ(cta.waits[i].op, "$.program[0].body[0].body[1]");
    }
  }
}

TEST(Loop, AWaitReusedWithoutACopyDeadlocksOnItsSecondTrip) {
  const Outcome o =
      predicted_and_simulated(loop_case(json::array({kCopy, loop(2, json::array({kWait}))})));
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  for (const CtaRecord& cta : o.ctas) {
    ASSERT_EQ(cta.waits.size(), 2u);
    EXPECT_TRUE(cta.waits[0].completed);
    EXPECT_EQ(cta.waits[1].phase, 1);
    EXPECT_FALSE(cta.waits[1].completed);
  }
}

// Two trips of a multicast copy before one wait. CTA 0 issues both trips before CTA 1 issues any,
// so its barrier gets two arrivals in one phase on a count of 1 (pending -1): the phase never
// completes. CTA 1's barrier completes phases 0 and 1 before its wait, which then checks parity 0
// while the barrier is in phase 2 (parity 0 again, open): mbarrier waits by parity, so it never
// returns either. A pipeline running a stage ahead of its consumer on one barrier.
TEST(Loop, CopiesTwoTripsAheadOfTheWaitHangOnTheParity) {
  const Outcome o =
      predicted_and_simulated(loop_case(json::array({loop(2, json::array({kCopy})), kWait})));
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  for (const CtaRecord& cta : o.ctas) {
    ASSERT_EQ(cta.waits.size(), 1u);
    EXPECT_EQ(cta.waits[0].phase, 0);
    EXPECT_FALSE(cta.waits[0].completed);
  }
}

TEST(Loop, ParsesRoundTripsAndRefusesWhatItCannotHold) {
  const Case c = case_from_json(loop_case(json::array({loop(2, json::array({kCopy, kWait}))})));
  EXPECT_EQ(case_to_json(case_from_json(case_to_json(c))), case_to_json(c));
  const auto error = [](const json& j) -> std::string {
    try {
      case_from_json(j);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error(loop_case(json::array({loop(0, json::array({kWait}))}))).find("trip_count"),
            std::string::npos);
  EXPECT_NE(error(loop_case(json::array({loop(257, json::array({kWait}))}))).find("trip_count"),
            std::string::npos);
  EXPECT_NE(error(loop_case(json::array({loop(2, json::array({loop(2, json::array({kWait}))}))})))
                .find("do not nest"),
            std::string::npos);
  json scoped = json::parse(R"({"op": "run_scoped", "allocs": [], "body": []})");
  EXPECT_NE(error(loop_case(json::array({loop(2, json::array({scoped}))}))).find("no run_scoped"),
            std::string::npos);
  json many = json::array();
  for (int i = 0; i < 5; ++i) many.push_back(kWait);
  EXPECT_NE(error(loop_case(json::array({loop(250, many)}))).find("op executions"),
            std::string::npos);
}

}  // namespace
}  // namespace collfuzz
