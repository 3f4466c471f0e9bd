// plgpu.try_cluster_cancel (docs/case-format.md, "try_cluster_cancel"): the reader names what the
// case language refuses, the JSON form round-trips, the reference and the simulator agree on the
// accounting (one issuer per cluster balances; `collective_axes=()` over two CTAs delivers two
// responses to each), the interpret profile makes every cancel fail, and the lowering's checks
// are predicted alike by the reference and the lowering.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::parse_error;
using simtest::predicted_and_simulated;

json cancel_case(const json& axes, const std::string& dtype = "uint8", std::int64_t n = 16,
                 const std::string& semantics = "lane", const std::string& arch = "sm_100a") {
  json j = json::parse(R"({
    "format": 1, "name": "cluster_cancel", "inputs": [], "outputs": [],
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "res", "kind": "smem"},
        {"name": "bar", "kind": "barrier", "num_arrivals": 1}],
      "body": [
        {"op": "try_cluster_cancel", "result": {"alloc": "res"},
         "barrier": {"alloc": "bar", "index": 0}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}]}]
  })");
  j["target"] = {{"arch", arch}, {"semantics", semantics}};
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  j["program"][0]["allocs"][0]["shape"] = json::array({n});
  if (!axes.is_null()) j["program"][0]["body"][0]["collective_axes"] = axes;
  return j;
}

const BarrierRecord& bar_of(const Outcome& o, std::size_t cta) {
  return o.ctas.at(cta).barriers.at(0);
}

TEST(ClusterCancel, TheReaderNamesWhatItRefuses) {
  EXPECT_NE(parse_error(cancel_case({"x"}, "uint8", 16, "lane", "sm_80"))
                .find("$.program[0].body[0].op: try_cluster_cancel on sm_80 is not modelled"),
            std::string::npos);
  EXPECT_NE(parse_error(cancel_case({"z"}))
                .find("$.program[0].body[0].collective_axes[0]: \"z\" is not a cluster axis"),
            std::string::npos);
  EXPECT_NE(parse_error(cancel_case({"x", "x"}))
                .find("$.program[0].body[0].collective_axes[1]: \"x\" is named twice"),
            std::string::npos);
  json bad = cancel_case({"x"});
  bad["program"][0]["body"][0]["result"] = {{"alloc", "bar"}};
  EXPECT_NE(parse_error(bad).find("$.program[0].body[0].result.alloc: \"bar\" is a barrier"),
            std::string::npos);
  bad = cancel_case({"x"});
  bad["program"][0]["allocs"][1]["num_barriers"] = 2;
  bad["program"][0]["body"][0]["barrier"].erase("index");
  EXPECT_NE(parse_error(bad).find("$.program[0].body[0].barrier: \"bar\" holds 2 barriers"),
            std::string::npos);
  bad = cancel_case({"x"});
  bad["program"][0]["body"][0]["extra"] = 1;
  EXPECT_NE(parse_error(bad).find("$.program[0].body[0]"), std::string::npos);
}

TEST(ClusterCancel, TheJsonFormRoundTrips) {
  for (const json& axes : {json(nullptr), json("x"), json::array({"x"})}) {
    const Case c = case_from_json(cancel_case(axes));
    const json written = case_to_json(c);
    EXPECT_EQ(case_to_json(case_from_json(written)), written);
    const auto& tc = std::get<TryClusterCancel>(std::get<RunScoped>(c.program[0].v).body[0].v);
    EXPECT_EQ(tc.collective_axes.size(), axes.is_null() ? 0u : 1u);
  }
}

TEST(ClusterCancel, OneIssuerBalancesEveryCta) {
  for (const char* sem : {"lane", "warpgroup"}) {
    const Outcome o = predicted_and_simulated(case_from_json(cancel_case({"x"}, "uint8", 16, sem)));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << sem;
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(bar_of(o, r).armed.value_or(-99), 16) << sem;
      EXPECT_EQ(bar_of(o, r).received.value_or(-99), 16) << sem;
      EXPECT_EQ(bar_of(o, r).phases.value_or(-99), 1) << sem;
      EXPECT_TRUE(o.ctas[r].buffers.at(0).undefined);  // the scheduler's response
    }
  }
}

TEST(ClusterCancel, EveryCtaIssuingDeliversTwoResponsesToEach) {
  const Outcome o = predicted_and_simulated(case_from_json(cancel_case(json::array())));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(bar_of(o, r).armed.value_or(-99), 16);
    EXPECT_EQ(bar_of(o, r).received.value_or(-99), 32);
    EXPECT_EQ(bar_of(o, r).tx.value_or(-99), -16);
  }
}

TEST(ClusterCancel, AnIndexedResultIsARowOfTheAllocation) {
  // plgpu.TryClusterCancelResult(2).at[1]: int8[2, 16], the response in row 1.
  json j = cancel_case({"x"}, "int8", 16, "warpgroup");
  j["program"][0]["allocs"][0]["shape"] = json::array({2, 16});
  j["program"][0]["body"][0]["result"]["index"] = json::array({1});
  const Case c = case_from_json(j);
  EXPECT_EQ(case_to_json(case_from_json(case_to_json(c))), case_to_json(c));
  const Outcome o = predicted_and_simulated(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(bar_of(o, 1).received.value_or(-99), 16);
  // The whole int8[2, 16] is 256 bits; an index past the dim is bad input.
  j["program"][0]["body"][0]["result"].erase("index");
  const Outcome whole = predicted_and_simulated(case_from_json(j));
  ASSERT_EQ(whole.kind, OutcomeKind::kRejected);
  EXPECT_EQ(whole.diagnostic->message,
            "Try cluster cancel response must be 128 bits, but is 256 bits.");
  j["program"][0]["body"][0]["result"]["index"] = json::array({2});
  EXPECT_NE(parse_error(j).find("$.program[0].body[0].result.index[0]"), std::string::npos);
  // uint32[2, 4].at[1] under Warpgroup: the verifier names the strided row.
  json u = cancel_case({"x"}, "uint32", 4, "warpgroup");
  u["program"][0]["allocs"][0]["shape"] = json::array({2, 4});
  u["program"][0]["body"][0]["result"]["index"] = json::array({1});
  const Outcome v = predicted_and_simulated(case_from_json(u));
  ASSERT_EQ(v.kind, OutcomeKind::kRejected);
  EXPECT_NE(v.diagnostic->message.find(
                "but got 'memref<4xi32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>'"),
            std::string::npos);
}

TEST(ClusterCancel, InterpretModeMakesEveryCancelFail) {
  const Outcome o = predict(case_from_json(cancel_case({"x"})), Profile::kInterpret).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(bar_of(o, r).arrivals.value_or(-99), 1);
    EXPECT_EQ(bar_of(o, r).armed.value_or(0), 0);  // interpret mode counts no bytes
    EXPECT_EQ(bar_of(o, r).phases.value_or(-99), 1);
    EXPECT_FALSE(o.ctas[r].buffers.at(0).undefined);
  }
}

TEST(ClusterCancel, TheLoweringChecksArePredictedAlike) {
  // 64 bits: the lowering rule's TypeError, both semantics.
  for (const char* sem : {"lane", "warpgroup"}) {
    const Outcome o = predicted_and_simulated(case_from_json(cancel_case({"x"}, "uint8", 8, sem)));
    ASSERT_EQ(o.kind, OutcomeKind::kRejected);
    EXPECT_EQ(o.diagnostic->rule, "lower.try_cluster_cancel.result_bits");
    EXPECT_EQ(o.diagnostic->message,
              "Try cluster cancel response must be 128 bits, but is 64 bits.");
  }
  // uint32[4]: Lane lowers it, Warpgroup's verifier refuses it (a known JAX bug).
  EXPECT_EQ(predicted_and_simulated(case_from_json(cancel_case({"x"}, "uint32", 4, "lane"))).kind,
            OutcomeKind::kCompleted);
  const Outcome wg =
      predicted_and_simulated(case_from_json(cancel_case({"x"}, "uint32", 4, "warpgroup")));
  ASSERT_EQ(wg.kind, OutcomeKind::kRejected);
  EXPECT_EQ(wg.diagnostic->rule, "verify.try_cluster_cancel.result_i8");
  EXPECT_NE(wg.diagnostic->message.find("but got 'memref<4xi32, #gpu.address_space<workgroup>>'"),
            std::string::npos);
  // sm_90a: ptxas refuses clusterlaunchcontrol.
  const Outcome sm90 =
      predicted_and_simulated(case_from_json(cancel_case({"x"}, "uint8", 16, "lane", "sm_90a")));
  ASSERT_EQ(sm90.kind, OutcomeKind::kRejected);
  EXPECT_EQ(sm90.diagnostic->rule, "compile.try_cluster_cancel.pre_blackwell");
}

}  // namespace
}  // namespace collfuzz
