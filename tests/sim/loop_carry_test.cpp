// Loop-carried values (docs/case-format.md, "Loop-carried values"): `acc = lax.fori_loop(0, n,
// body returning next, init)`. init is evaluated before the first trip, next after each trip's
// body; {"carry": name} reads the trip's value inside the loop and the result after it. Under
// Lane, mgpu.fori compares next's pytree with init's (lower.loop.carry_layout) unless the loop has
// one trip (unrolled); Warpgroup's layout inference lays all three out alike.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::c;
using simtest::op;
using simtest::predicted_and_simulated;

json tile_at(const json& index) {
  return {{"load", {{"alloc", "tiles"}, {"index", json::array({index})}}}};
}
json carry() { return {{"carry", "acc"}}; }

// x = arange float32[4, 256] copied into `tiles`; a loop of `trips` trips carries acc (`init`,
// `next`), storing the trip's acc into y.at[i]; after it z = acc.
json accumulate_case(const char* semantics, const json& init, const json& next,
                     std::int64_t trips = 4, const char* dtype = "float32") {
  json j = json::parse(R"({
    "format": 1, "name": "loop_carry",
    "mesh": {},
    "target": {"arch": "sm_90a"},
    "inputs": [{"name": "x", "shape": [4, 256], "fill": {"pattern": "arange", "step": 1}}],
    "outputs": [{"name": "y", "shape": [4, 256]}, {"name": "z", "shape": [256]}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "tiles", "kind": "smem", "shape": [4, 256]},
        {"name": "bar", "kind": "barrier"}],
      "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tiles"},
         "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
        {"op": "loop", "index": "i",
         "carry": {"name": "acc", "shape": [256]},
         "body": [{"op": "vector_store", "dst": {"output": "y", "index": [{"loop": "i"}]},
                   "value": {"carry": "acc"}}]},
        {"op": "vector_store", "dst": {"output": "z"}, "value": {"carry": "acc"}}]}]
  })");
  j["target"]["semantics"] = semantics;
  j["inputs"][0]["dtype"] = dtype;
  j["outputs"][0]["dtype"] = dtype;
  j["outputs"][1]["dtype"] = dtype;
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  json& loop = j["program"][0]["body"][2];
  loop["trip_count"] = trips;
  loop["carry"]["dtype"] = dtype;
  loop["carry"]["init"] = init;
  loop["carry"]["next"] = next;
  return j;
}

float element(const Outcome& o, std::size_t output, std::int64_t i) {
  float f = 0;
  std::memcpy(&f, o.outputs.at(output).bytes.data() + i * 4, 4);
  return f;
}

TEST(LoopCarry, TheBodyReadsTheTripsValueAndTheOpsAfterTheLoopItsResult) {
  // acc_0 = x[0]; acc_{i+1} = acc_i + x[i]: y[i] = acc_i, z = 2 x[0] + x[1] + x[2] + x[3].
  // x[i][k] = 256 i + k: y[0] = k, y[1] = 2k, y[2] = 3k + 256, y[3] = 4k + 768, z = 5k + 1536.
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Case k = case_from_json(
        accumulate_case(semantics, tile_at(0), op("add", carry(), tile_at({{"loop", "i"}}))));
    const Outcome o = predicted_and_simulated(k);
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics;
    const std::int64_t y_base[4] = {0, 0, 256, 768};
    for (std::int64_t i = 0; i < 4; ++i) {
      for (std::int64_t e = 0; e < 256; e += 51)
        EXPECT_EQ(element(o, 0, i * 256 + e), static_cast<float>((i + 1) * e + y_base[i]));
    }
    for (std::int64_t e = 0; e < 256; e += 17)
      EXPECT_EQ(element(o, 1, e), static_cast<float>(5 * e + 1536));
  }
}

TEST(LoopCarry, UnderLaneASplatInitWithALoadedNextIsRefusedAfterTheBody) {
  const std::string splat_vs_strided =
      "(PyTreeDef([CustomNode(FragmentedArray[(WGStridedFragLayout(shape=(256,), vec_size=2), "
      "(1,), None)], [*])]), PyTreeDef([CustomNode(FragmentedArray[(WGSplatFragLayout("
      "shape=(256,)), (), None)], [*])]))";
  const json j = accumulate_case("lane", c(0), op("add", carry(), tile_at({{"loop", "i"}})));
  const Case k = case_from_json(j);
  const Prediction p = predict(k, Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value());
  EXPECT_EQ(p.outcome.diagnostic->rule, "lower.loop.carry_layout");
  EXPECT_EQ(p.outcome.diagnostic->stage, "lower");
  EXPECT_EQ(p.outcome.diagnostic->exception, "ValueError");
  EXPECT_EQ(p.outcome.diagnostic->message, splat_vs_strided);
  EXPECT_EQ(p.outcome.diagnostic->op, "$.program[0].body[2]");
  const Diagnostic lowered = simtest::lower_rejected(k);
  EXPECT_EQ(lowered.rule, "lower.loop.carry_layout");
  EXPECT_EQ(lowered.message, splat_vs_strided);
  // Interpret mode runs it: z = x[0] + x[1] + x[2] + x[3] = 4k + 1536.
  EXPECT_EQ(predict(k, Profile::kInterpret).outcome.kind, OutcomeKind::kCompleted);
  // Warpgroup's layout inference lays it out; a loop of one trip is unrolled (no comparison).
  for (const json& accepted :
       {accumulate_case("warpgroup", c(0), op("add", carry(), tile_at({{"loop", "i"}}))),
        accumulate_case("lane", c(0), op("add", carry(), tile_at({{"loop", "i"}})), 1)}) {
    const Outcome o = predicted_and_simulated(case_from_json(accepted));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << accepted["target"].dump();
  }
}

TEST(LoopCarry, TheTreesNameEachSidesLayoutRegistersAndSignedness) {
  // A loaded init and a constant next, uint32: next's splat tree first, then init's strided one
  // (256 elements of vec_size 2: one register), is_signed False.
  const json j = accumulate_case("lane", tile_at(0), c(7), 2, "uint32");
  const Prediction p = predict(case_from_json(j), Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value());
  EXPECT_EQ(p.outcome.diagnostic->message,
            "(PyTreeDef([CustomNode(FragmentedArray[(WGSplatFragLayout(shape=(256,)), (), "
            "False)], [*])]), PyTreeDef([CustomNode(FragmentedArray[(WGStridedFragLayout("
            "shape=(256,), vec_size=2), (1,), False)], [*])]))");
  // A constant carried by constants (splat to splat), and a loaded one added to: no refusal.
  for (const json& accepted : {accumulate_case("lane", c(1), op("add", carry(), c(2)), 3),
                               accumulate_case("lane", tile_at(0), op("mul", carry(), c(2)), 3)}) {
    EXPECT_EQ(predicted_and_simulated(case_from_json(accepted)).kind, OutcomeKind::kCompleted);
  }
}

TEST(LoopCarry, EightBitArithmeticInNextIsRefusedAsAVectorStoresIs) {
  json j = accumulate_case("warpgroup", tile_at(0), op("add", carry(), c(1)), 2, "int8");
  j["inputs"][0]["fill"] = {{"pattern", "constant"}, {"value", 3}};
  const Case k = case_from_json(j);
  const Prediction p = predict(k, Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value());
  EXPECT_EQ(p.outcome.diagnostic->rule, "lower.vector.pointwise_8bit");
  EXPECT_EQ(p.outcome.diagnostic->stage, "dialect");
  EXPECT_EQ(simtest::lower_rejected(k).rule, "lower.vector.pointwise_8bit");
}

TEST(LoopCarry, TheParserNamesTheFieldOfABadCarry) {
  // The field a parse error names: its message up to ": " (simtest::parse_error).
  const auto error_at = [](const json& j) {
    const std::string what = simtest::parse_error(j);
    return what.substr(0, what.find(": "));
  };
  const json good = accumulate_case("lane", tile_at(0), op("add", carry(), c(1)));
  json bad = good;
  bad["program"][0]["body"][2]["carry"]["shape"] = json{100};  // no multiple of 128
  EXPECT_EQ(error_at(bad), "$.program[0].body[2].carry.shape");
  bad = good;
  bad["program"][0]["body"][2]["carry"]["init"] = carry();  // init reads no carry of its own
  EXPECT_EQ(error_at(bad), "$.program[0].body[2].carry.init.carry");
  bad = good;
  bad["program"][0]["body"][3]["value"] = {{"carry", "other"}};
  EXPECT_EQ(error_at(bad), "$.program[0].body[3].value.carry");
  bad = good;
  bad["program"][0]["body"][2]["carry"]["name"] = "tiles";  // names are unique in a case
  EXPECT_EQ(error_at(bad), "$.program[0].body[2].carry.name");
  // Read before the loop: not in scope yet.
  bad = good;
  bad["program"][0]["body"].insert(bad["program"][0]["body"].begin() + 2,
                                   bad["program"][0]["body"][3]);
  EXPECT_EQ(error_at(bad), "$.program[0].body[2].value.carry");
  // The case writer writes what the reader read.
  const Case k = case_from_json(good);
  EXPECT_EQ(case_to_json(case_from_json(case_to_json(k))), case_to_json(k));
}

}  // namespace
}  // namespace collfuzz
