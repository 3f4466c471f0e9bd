// Vector stores (docs/case-format.md, "vector_store"): `dst[...] = smem[...] + 1` and friends.
// The parser holds what the case language models and names the field otherwise, the JSON form
// round-trips, the element arithmetic is the dtype's, the reference and the simulator agree on the
// stored values, the ordering against TMA stores decides what is compared, and the 8-bit rule
// fires at the stage each semantics puts it.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/element_value.h"
#include "harness/core/errors.h"
#include "harness/core/vector_arith.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::parse_error;
using simtest::predicted_and_simulated;
using simtest::tile;

// Cluster (2,) x; x = arange DTYPE[256]; each CTA copies its half into tile, waits, and runs
// `tail` (ops after the wait).
json tile_case(const std::string& dtype, const json& tail, const std::string& semantics = "lane",
               const json& outputs = json::parse(R"([{"name": "y", "shape": [256]}])")) {
  json j = json::parse(R"({
    "format": 1, "name": "vector_store",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a"},
    "inputs": [{"name": "x", "shape": [256], "fill": {"pattern": "arange"}}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "tile", "kind": "smem", "shape": [128]},
        {"name": "bar", "kind": "barrier"}],
      "body": [
        {"op": "copy_gmem_to_smem",
         "src": {"input": "x", "index": [{"start": {"axis": "x", "mul": 128}, "size": 128}]},
         "dst": {"alloc": "tile"}, "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]
  })");
  j["target"]["semantics"] = semantics;
  j["inputs"][0]["dtype"] = dtype;
  if (dtype_bits(parse_dtype(dtype).value()) == 8) j["inputs"][0]["fill"] = {{"pattern", "random"}};
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  j["outputs"] = outputs;
  for (json& o : j["outputs"]) o["dtype"] = dtype;
  for (const json& op : tail) j["program"][0]["body"].push_back(op);
  return j;
}

json half_slice() {
  return json::array({{{"start", {{"axis", "x"}, {"mul", 128}}}, {"size", 128}}});
}

json store(const json& value, const std::string& output = "y", const json& index = half_slice()) {
  return {
      {"op", "vector_store"}, {"dst", {{"output", output}, {"index", index}}}, {"value", value}};
}

std::int32_t i32_at(const Outcome& o, std::size_t out, std::int64_t e) {
  std::int32_t v = 0;
  std::memcpy(&v, o.outputs.at(out).bytes.data() + e * 4, 4);
  return v;
}

TEST(VectorStore, TileOpConstantOverTheCluster) {
  const json value = {{"mul", {{{"sub", {tile(), {{"const", 3}}}}}, tile()}}};
  const Outcome o =
      predicted_and_simulated(case_from_json(tile_case("int32", json::array({store(value)}))));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  ASSERT_EQ(o.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
  for (std::int64_t e : {0, 1, 3, 127, 128, 255}) EXPECT_EQ(i32_at(o, 0, e), (e - 3) * e);
}

TEST(VectorStore, AnInputSliceAndAConstantOnly) {
  json in = {{"load", {{"input", "x"}, {"index", half_slice()}}}};
  const json tail =
      json::array({store({{"add", {in, in}}}),
                   store({{"const", -7}}, "z", json::array({{{"start", 0}, {"size", 128}}}))});
  const json outs =
      json::parse(R"([{"name": "y", "shape": [256]}, {"name": "z", "shape": [128]}])");
  const Outcome o = predicted_and_simulated(case_from_json(tile_case("int32", tail, "lane", outs)));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(i32_at(o, 0, 200), 400);
  EXPECT_EQ(i32_at(o, 1, 5), -7);  // both CTAs store -7: the same value, no race
  EXPECT_EQ(o.outputs.at(1).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 128}}));
}

TEST(VectorStore, TwoCtasStoringDifferentValuesIntoOneSliceRace) {
  const json whole = json::array({{{"start", 0}, {"size", 128}}});
  const json outs = json::parse(R"([{"name": "y", "shape": [128]}])");
  const Outcome o = predicted_and_simulated(
      case_from_json(tile_case("int32", json::array({store(tile(), "y", whole)}), "lane", outs)));
  EXPECT_TRUE(o.outputs.at(0).written.empty());
}

TEST(VectorStore, AfterAWaitedTmaStoreItIsOrderedAfterOneInFlightItRaces) {
  const json plus_one = {{"add", {tile(), {{"const", 1}}}}};
  const json tma = {{"op", "copy_smem_to_gmem"},
                    {"src", {{"alloc", "tile"}}},
                    {"dst", {{"output", "y"}, {"index", half_slice()}}}};
  json in_flight = tma;
  in_flight["wait"] = false;
  const Outcome waited = predicted_and_simulated(
      case_from_json(tile_case("int32", json::array({tma, store(plus_one)}))));
  EXPECT_EQ(waited.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
  EXPECT_EQ(i32_at(waited, 0, 7), 8);
  const json wait0 = {{"op", "wait_smem_to_gmem"}, {"n", 0}};
  const Outcome racing = predicted_and_simulated(
      case_from_json(tile_case("int32", json::array({in_flight, store(plus_one), wait0}))));
  EXPECT_TRUE(racing.outputs.at(0).written.empty());
  // And a TMA store after a vector store of other values: no fence orders the two proxies.
  const Outcome after = predicted_and_simulated(
      case_from_json(tile_case("int32", json::array({store(plus_one), tma}))));
  EXPECT_TRUE(after.outputs.at(0).written.empty());
}

TEST(VectorStore, ARaceIsWithEveryWriterOfTheValueNotOnlyTheLast) {
  // Each CTA TMA-stores its tile into y[0:128] (waited), then vector-stores tile + 128 there:
  // CTA 0 writes k then k + 128, CTA 1 k + 128 then k + 256. CTA 1's TMA store leaves CTA 0's
  // vector-stored value as it was, and CTA 1's vector store is ordered after its own TMA store
  // only: CTA 0's vector store may still come last, so y ends k + 128 or k + 256 (a generated
  // case, seed 9, that jax-interpret ended either way).
  const json whole = json::array({{{"start", 0}, {"size", 128}}});
  const json outs = json::parse(R"([{"name": "y", "shape": [128]}])");
  const json tma = {{"op", "copy_smem_to_gmem"},
                    {"src", {{"alloc", "tile"}}},
                    {"dst", {{"output", "y"}, {"index", whole}}}};
  const json plus_128 = {{"add", {tile(), {{"const", 128}}}}};
  const Outcome o = predicted_and_simulated(case_from_json(
      tile_case("int32", json::array({tma, store(plus_128, "y", whole)}), "lane", outs)));
  EXPECT_TRUE(o.outputs.at(0).written.empty());
}

TEST(VectorStore, EightBitArithmeticIsRefusedAtTheStageOfTheSemantics) {
  const json value = {{"add", {tile(), {{"const", 1}}}}};
  for (const auto& [semantics, stage] :
       {std::pair{"lane", "lower"}, std::pair{"warpgroup", "dialect"}}) {
    const Case c = case_from_json(tile_case("int8", json::array({store(value)}), semantics));
    const Prediction p = predict(c, Profile::kMosaic);
    ASSERT_TRUE(p.outcome.diagnostic.has_value()) << semantics;
    EXPECT_EQ(p.outcome.diagnostic->rule, "lower.vector.pointwise_8bit");
    EXPECT_EQ(p.outcome.diagnostic->stage, stage);
    EXPECT_EQ(p.outcome.diagnostic->exception, "NotImplementedError");
    const Diagnostic lowered = simtest::lower_rejected(c);
    EXPECT_EQ(lowered.rule, "lower.vector.pointwise_8bit");
    EXPECT_EQ(lowered.stage, stage);
    EXPECT_EQ(lowered.message, p.outcome.diagnostic->message);
    // Interpret mode computes it, wrapping.
    EXPECT_EQ(predict(c, Profile::kInterpret).outcome.kind, OutcomeKind::kCompleted);
  }
  // A plain load or a constant of an 8-bit dtype is no arithmetic.
  const Case plain = case_from_json(tile_case("int8", json::array({store(tile())})));
  EXPECT_FALSE(predict(plain, Profile::kMosaic).outcome.diagnostic.has_value());
}

TEST(VectorStore, TheParserNamesWhatTheCaseLanguageDoesNotHold) {
  const json outs64 =
      json::parse(R"([{"name": "y", "shape": [256]}, {"name": "s", "shape": [64]}])");
  EXPECT_NE(parse_error(tile_case("int32",
                                  json::array({store({{"const", 1}}, "s",
                                                     json::array({{{"start", 0}, {"size", 1}}}))}),
                                  "lane", outs64))
                .find("$.program[0].body[2].dst: a vector store of one element is JAX's scalar "
                      "store, which is not modelled"),
            std::string::npos);
  EXPECT_NE(parse_error(tile_case("int64", json::array({store({{"const", 1}})})))
                .find("$.program[0].body[2].dst.output: a vector store of dtype int64 is not "
                      "modelled"),
            std::string::npos);
  json whole = {{"load", {{"input", "x"}}}};  // 256 elements into a 128-element slice
  EXPECT_NE(parse_error(tile_case("int32", json::array({store(whole)})))
                .find("$.program[0].body[2].value.load: the loaded ref must have the destination's "
                      "shape"),
            std::string::npos);
  EXPECT_NE(parse_error(tile_case("float16", json::array({store({{"const", 0.1}})})))
                .find("$.program[0].body[2].value.const: value 0.1 is not exactly a finite value "
                      "of float16"),
            std::string::npos);
  EXPECT_NE(parse_error(tile_case("int32", json::array({store({{"div", {tile(), tile()}}})})))
                .find("$.program[0].body[2].value.div: unknown vector value \"div\""),
            std::string::npos);
  EXPECT_NE(parse_error(tile_case("int32", json::array({store({{"add", json::array({tile()})}})})))
                .find("$.program[0].body[2].value.add: expected two operands"),
            std::string::npos);
}

TEST(VectorStore, TheJsonFormRoundTrips) {
  const json value = {{"sub",
                       {{{"mul", {tile(), {{"const", 2}}}}},
                        {{"load", {{"input", "x"}, {"index", half_slice()}}}}}}};
  const Case c = case_from_json(tile_case("float32", json::array({store(value)})));
  const json written = case_to_json(c);
  const json& op = written["program"][0]["body"][2];
  EXPECT_EQ(op["op"], "vector_store");
  EXPECT_EQ(op["value"]["sub"][0]["mul"][1]["const"], 2);
  EXPECT_EQ(case_to_json(case_from_json(written)), written);
}

TEST(VectorStore, IntoSmemItIsSeenByATmaStoreOnlyAfterACommitSmem) {
  const json in_place = {{"op", "vector_store"},
                         {"dst", {{"alloc", "tile"}}},
                         {"value", {{"add", {tile(), {{"const", 1}}}}}}};
  json tma = {{"op", "copy_smem_to_gmem"},
              {"src", {{"alloc", "tile"}}},
              {"dst", {{"output", "y"}, {"index", half_slice()}}}};
  const Outcome fenced =
      predicted_and_simulated(case_from_json(tile_case("int32", json::array({in_place, tma}))));
  EXPECT_EQ(fenced.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
  EXPECT_EQ(i32_at(fenced, 0, 130), 131);
  tma["commit_smem"] = false;
  const Outcome unfenced =
      predicted_and_simulated(case_from_json(tile_case("int32", json::array({in_place, tma}))));
  EXPECT_TRUE(unfenced.outputs.at(0).written.empty());
  const json fence = {{"op", "commit_smem"}};
  const Outcome explicit_fence = predicted_and_simulated(
      case_from_json(tile_case("int32", json::array({in_place, fence, tma}))));
  EXPECT_EQ(i32_at(explicit_fence, 0, 5), 6);
  // Interpret mode has no proxies: the unfenced store reads the new bytes.
  const Case c = case_from_json(tile_case("int32", json::array({in_place, tma})));
  const Outcome interpret = predict(c, Profile::kInterpret).outcome;
  EXPECT_EQ(interpret.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
}

TEST(VectorStore, IntoABufferOfALaterScopeAfterTheEarlierScopesBufferWasRead) {
  // Found by a 75-s campaign: sibling run_scopeds share SMEM offsets; the simulator reads the
  // first scope's buffer when a later write would change it, which a vector store is too.
  const Case c = case_from_json(json::parse(R"({
    "format": 1, "name": "t", "mesh": {}, "target": {"arch": "sm_90a"},
    "inputs": [{"name": "x", "shape": [128], "dtype": "float32", "fill": {"pattern": "iota"}}],
    "program": [
      {"op": "run_scoped", "allocs": [{"name": "a", "kind": "smem", "shape": [128], "dtype": "float32"},
                                      {"name": "bar", "kind": "barrier"}],
       "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "a"},
                 "barrier": {"alloc": "bar"}},
                {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]},
      {"op": "run_scoped", "allocs": [{"name": "b", "kind": "smem", "shape": [128], "dtype": "float32"}],
       "body": [{"op": "vector_store", "dst": {"alloc": "b"}, "value": {"const": 7}}]}]
  })"));
  const Outcome o = predicted_and_simulated(c);
  EXPECT_EQ(o.kind, OutcomeKind::kCompleted);
}

TEST(VectorArith, EachDtypeRoundsOrWrapsAsTheHardware) {
  // int16 wraps, uint8 wraps below zero.
  EXPECT_EQ(vector_binary(VectorKind::kAdd, DType::kInt16, 0x7fff, 1).bits, 0x8000u);
  EXPECT_EQ(vector_binary(VectorKind::kSub, DType::kUInt8, 0, 1).bits, 0xffu);
  EXPECT_EQ(vector_binary(VectorKind::kMul, DType::kInt32, 0x10000, 0x10000).bits, 0u);
  // float16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10; to even is 1.
  const std::uint64_t one = *exact_float_bits(DType::kFloat16, 1.0);
  const std::uint64_t half_ulp = *exact_float_bits(DType::kFloat16, 0x1p-11);
  EXPECT_EQ(vector_binary(VectorKind::kAdd, DType::kFloat16, one, half_ulp).bits, one);
  // bfloat16: 3 * (1 + 2^-7) = 3 + 1.5 * 2^-6, a tie between 3 + 2^-6 (odd mantissa) and
  // 3 + 2^-5 (even) at a spacing of 2^-6: to even is 3.03125.
  const std::uint64_t b = *exact_float_bits(DType::kBFloat16, 1 + 0x1p-7);
  const std::uint64_t three = *exact_float_bits(DType::kBFloat16, 3.0);
  EXPECT_EQ(float_element_value(DType::kBFloat16,
                                vector_binary(VectorKind::kMul, DType::kBFloat16, three, b).bits),
            3.03125);
  // A NaN and a subnormal result are not compared.
  const std::uint64_t inf = 0x7c00;
  EXPECT_TRUE(vector_binary(VectorKind::kSub, DType::kFloat16, inf, inf).unspecified);
  const std::uint64_t tiny = *exact_float_bits(DType::kFloat32, 0x1p-100);
  EXPECT_TRUE(vector_binary(VectorKind::kMul, DType::kFloat32, tiny, tiny).unspecified);
  const std::uint64_t one32 = *exact_float_bits(DType::kFloat32, 1.0);
  EXPECT_FALSE(vector_binary(VectorKind::kMul, DType::kFloat32, one32, one32).unspecified);
}

TEST(VectorArith, MinAndMaxCompareAsTheDtypesValues) {
  // int16: 0xffff is -1, below 1; uint16: 0xffff is 65535, above 1.
  EXPECT_EQ(vector_binary(VectorKind::kMin, DType::kInt16, 0xffff, 1).bits, 0xffffu);
  EXPECT_EQ(vector_binary(VectorKind::kMax, DType::kInt16, 0xffff, 1).bits, 1u);
  EXPECT_EQ(vector_binary(VectorKind::kMin, DType::kUInt16, 0xffff, 1).bits, 1u);
  EXPECT_EQ(vector_binary(VectorKind::kMax, DType::kUInt32, 0x80000000u, 0x7fffffffu).bits,
            0x80000000u);
  EXPECT_EQ(vector_binary(VectorKind::kMax, DType::kInt32, 0x80000000u, 0x7fffffffu).bits,
            0x7fffffffu);
  EXPECT_EQ(vector_binary(VectorKind::kMin, DType::kInt8, 0x80, 0x7f).bits, 0x80u);
  // Floats: one operand exactly, by value (-2 < 1 whatever the bit patterns say).
  const std::uint64_t m2 = *exact_float_bits(DType::kBFloat16, -2.0);
  const std::uint64_t p1 = *exact_float_bits(DType::kBFloat16, 1.0);
  EXPECT_EQ(vector_binary(VectorKind::kMax, DType::kBFloat16, m2, p1).bits, p1);
  EXPECT_EQ(vector_binary(VectorKind::kMin, DType::kBFloat16, m2, p1).bits, m2);
  EXPECT_FALSE(vector_binary(VectorKind::kMin, DType::kBFloat16, m2, p1).unspecified);
  // +0 against -0, a NaN operand and a subnormal result are not compared.
  EXPECT_TRUE(vector_binary(VectorKind::kMax, DType::kFloat32, 0x80000000u, 0).unspecified);
  EXPECT_TRUE(vector_binary(VectorKind::kMin, DType::kFloat16, 0x7e00, 0x3c00).unspecified);
  const std::uint64_t tiny = *exact_float_bits(DType::kFloat32, 0x1p-130);
  EXPECT_TRUE(vector_binary(VectorKind::kMax, DType::kFloat32, tiny, 0).unspecified);
  EXPECT_FALSE(vector_binary(VectorKind::kMax, DType::kFloat32, 0, 0).unspecified);
}

}  // namespace
}  // namespace collfuzz
