// Broadcasts in vector values (docs/case-format.md, "vector_store"): {"broadcast": {"shape": S,
// "value": V}}, JAX's jnp.broadcast_to(V, shape) along new leading dims (the one broadcast Mosaic
// GPU lays out for a strided value). Element j of the result is V's element j modulo V's count.
// Under Lane the result keeps V's register layout (its vec_size), so an op with a load of the
// whole shape is incompatible where the vector lengths differ; Warpgroup's layout inference
// lowers it. With "dims" (lax.broadcast_in_dim along other dims): Lane refuses any operand
// (lower.vector.broadcast_layout, naming its layout), Warpgroup one of its own layout
// (dialect.vector.broadcast_layout) and lowers one of constants; interpret mode computes them.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "oracles/oracles.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::op;
using simtest::predicted_and_simulated;
using simtest::tile_store_case;

json row(std::int64_t r) { return {{"load", {{"alloc", "tile"}, {"index", {r}}}}}; }
json broadcast(const json& shape, const json& v) {
  return {{"broadcast", {{"shape", shape}, {"value", v}}}};
}
json broadcast_in_dim(const json& shape, const json& dims, const json& v) {
  return {{"broadcast", {{"shape", shape}, {"dims", dims}, {"value", v}}}};
}

// tile_store_case with the tile, input and output of shape [rows, cols].
json rows_case(const std::string& dtype, const json& value, const std::string& semantics,
               std::int64_t rows, std::int64_t cols) {
  json j = tile_store_case(dtype, value, semantics);
  for (json* s : {&j["inputs"][0]["shape"], &j["outputs"][0]["shape"],
                  &j["program"][0]["allocs"][0]["shape"]})
    *s = json{rows, cols};
  return j;
}

TEST(VectorBroadcast, EachRowIsTheOperandUnderWarpgroupAndAloneUnderLane) {
  // int32[4, 128] = arange: y = broadcast_to(tile.at[2][...]) + tile[...] under Warpgroup, and
  // broadcast_to(tile.at[2][...]) + 1 under both semantics.
  const json bias = broadcast(json{128}, row(2));
  struct Run {
    json value;
    const char* semantics;
    bool plus_tile;
  };
  for (const Run& run : {Run{op("add", bias, {{"load", {{"alloc", "tile"}}}}), "warpgroup", true},
                         Run{op("add", bias, {{"const", 1}}), "lane", false},
                         Run{op("add", bias, {{"const", 1}}), "warpgroup", false}}) {
    const Outcome o = predicted_and_simulated(
        case_from_json(rows_case("int32", run.value, run.semantics, 4, 128)));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << run.value.dump() << " " << run.semantics;
    for (std::int64_t r = 0; r < 4; ++r) {
      for (std::int64_t c = 0; c < 128; ++c) {
        std::int32_t got = 0;
        std::memcpy(&got, o.outputs.at(0).bytes.data() + (r * 128 + c) * 4, 4);
        const std::int64_t want = (256 + c) + (run.plus_tile ? 128 * r + c : 1);
        ASSERT_EQ(got, want) << run.semantics << " " << r << "," << c;
      }
    }
  }
}

TEST(VectorBroadcast, UnderLaneTheRowKeepsItsShorterVector) {
  // float32 row (vec_size 1) + tile float32[4, 128] (vec_size 2): Lane refuses the add.
  const json j =
      rows_case("float32", op("add", broadcast(json{128}, row(0)), {{"load", {{"alloc", "tile"}}}}),
                "lane", 4, 128);
  const Case k = case_from_json(j);
  const Prediction p = predict(k, Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value());
  EXPECT_EQ(p.outcome.diagnostic->rule, "lower.vector.incompatible_layouts");
  EXPECT_EQ(simtest::lower_rejected(k).rule, "lower.vector.incompatible_layouts");
  EXPECT_EQ(predict(k, Profile::kInterpret).outcome.kind, OutcomeKind::kCompleted);
}

TEST(VectorBroadcast, TheParserTakesOperandsOfAMultipleOf128OntoDimsOfTheirSize) {
  const std::string at = "$.program[0].body[2].value.broadcast.shape";
  // A trailing dim broadcast (the row's dims not the trailing ones), and a 64-element operand.
  simtest::expect_parse_refused(rows_case("int32", broadcast(json{4}, row(0)), "lane", 4, 128), at,
                                "the operand's dim 0 is neither the value's dim 1");
  simtest::expect_parse_refused(rows_case("int32", broadcast(json{64}, row(0)), "lane", 4, 64), at,
                                "a multiple of 128 elements");
  const json value = broadcast(json{128}, row(1));
  const json written = case_to_json(case_from_json(rows_case("int32", value, "warpgroup", 4, 128)));
  EXPECT_EQ(written["program"][0]["body"][2]["value"], value);
}

TEST(VectorBroadcast, TheParserChecksDimsAndWritesOnlyOtherThanTrailingOnes) {
  const std::string at = "$.program[0].body[2].value.broadcast";
  const json iota = {{"iota", {{"dimension", 0}, {"vec_size", 1}}}};
  // (128, 4): the operand (128,) onto dim 0; dims not increasing, too many, of a wrong size.
  simtest::expect_parse_refused(
      rows_case("int32", broadcast_in_dim(json{128}, json{1}, iota), "lane", 128, 4), at + ".shape",
      "the operand's dim 0 is neither the value's dim 1");
  simtest::expect_parse_refused(
      rows_case("int32", broadcast_in_dim(json{128}, json{0, 1}, iota), "lane", 128, 4),
      at + ".dims", "expected 1 dims");
  simtest::expect_parse_refused(
      rows_case("int32", broadcast_in_dim(json{128}, json{2}, iota), "lane", 128, 4),
      at + ".dims[0]", "");
  json three = rows_case("int32", broadcast_in_dim(json{2, 128}, json{1, 0}, iota), "lane", 2, 128);
  for (json* s : {&three["inputs"][0]["shape"], &three["outputs"][0]["shape"],
                  &three["program"][0]["allocs"][0]["shape"]})
    *s = json{2, 128, 2};
  simtest::expect_parse_refused(three, at + ".dims[1]", "strictly increasing");
  // Other dims are written as read; the trailing ones as the default (no "dims").
  const json column = broadcast_in_dim(json{128}, json{0}, iota);
  EXPECT_EQ(case_to_json(case_from_json(
                rows_case("int32", column, "lane", 128, 4)))["program"][0]["body"][2]["value"],
            column);
  EXPECT_EQ(
      case_to_json(case_from_json(rows_case("int32", broadcast_in_dim(json{128}, json{1}, row(0)),
                                            "lane", 4, 128)))["program"][0]["body"][2]["value"],
      broadcast(json{128}, row(0)));
}

TEST(VectorBroadcast, InterpretModeComputesAColumnBroadcastThatTheCompilerRefuses) {
  // int32[128, 4]: y = tile ^ broadcast_in_dim(iota(128), (128, 4), (0,)), y[r, c] = x[r, c] ^ r.
  const json value =
      op("xor", {{"load", {{"alloc", "tile"}}}},
         broadcast_in_dim(json{128}, json{0}, {{"iota", {{"dimension", 0}, {"vec_size", 1}}}}));
  for (const auto& [semantics, rule, message] :
       {std::tuple{"lane", "lower.vector.broadcast_layout",
                   "Unsupported layout: WGStridedFragLayout(shape=(128,), vec_size=1)"},
        std::tuple{"warpgroup", "dialect.vector.broadcast_layout",
                   "Failed to infer a possible set of layouts."}}) {
    const Case k = case_from_json(rows_case("int32", value, semantics, 128, 4));
    const Prediction mosaic = predict(k, Profile::kMosaic);
    ASSERT_TRUE(mosaic.outcome.diagnostic.has_value()) << semantics;
    EXPECT_EQ(mosaic.outcome.diagnostic->rule, rule);
    EXPECT_EQ(mosaic.outcome.diagnostic->message.rfind(message, 0), 0u)
        << mosaic.outcome.diagnostic->message;
    const Diagnostic sim = simtest::lower_rejected(k);
    EXPECT_EQ(sim.rule, rule);
    EXPECT_EQ(sim.message, mosaic.outcome.diagnostic->message);
    const Prediction interpret = predict(k, Profile::kInterpret);
    ASSERT_EQ(interpret.outcome.kind, OutcomeKind::kCompleted) << semantics;
    for (std::int64_t e = 0; e < 512; ++e) {
      std::int32_t got = 0;
      std::memcpy(&got, interpret.outcome.outputs.at(0).bytes.data() + e * 4, 4);
      ASSERT_EQ(got, e ^ (e / 4)) << semantics << " " << e;
    }
  }
}

TEST(VectorBroadcast, TheLayoutSearchRunningOutOfFuelIsAnAlternativeOfItsUnsatisfiableSystem) {
  // Warpgroup's unsatisfiable system: JAX's backtracking search may run out of its 100,000 tries
  // first (found by a campaign of JAX 0.12.0.1 on a larger kernel). The compiler's prediction
  // admits that message, at the same stage, and no other; the interpret profile has no search.
  const json value =
      op("xor", {{"load", {{"alloc", "tile"}}}},
         broadcast_in_dim(json{128}, json{0}, {{"iota", {{"dimension", 0}, {"vec_size", 1}}}}));
  const Case k = case_from_json(rows_case("int32", value, "warpgroup", 128, 4));
  const Outcome expected = predict(k, Profile::kMosaic).outcome;
  ASSERT_TRUE(expected.diagnostic.has_value());
  ASSERT_EQ(expected.diagnostic->alternatives.size(), 1u);
  const std::string fuel =
      "Layout inference failed to find a solution. Consider adding layout annotations to your "
      "program to guide the search.";
  EXPECT_EQ(expected.diagnostic->alternatives[0].message, fuel);
  Outcome actual;
  actual.kind = OutcomeKind::kRejected;
  actual.profile = Profile::kMosaic;
  actual.diagnostic = Diagnostic{"dialect", "ValueError", fuel, "", ""};
  Verdict ok;
  diagnostic_oracle(expected, actual, DiagnosticLevel::kMessage, ok);
  EXPECT_TRUE(ok.mismatches.empty());
  actual.diagnostic->message = "Layout inference failed.";
  Verdict other;
  diagnostic_oracle(expected, actual, DiagnosticLevel::kMessage, other);
  EXPECT_EQ(other.mismatches.size(), 1u);
  actual.diagnostic = Diagnostic{"lower", "ValueError", fuel, "", ""};
  Verdict stage;
  diagnostic_oracle(expected, actual, DiagnosticLevel::kMessage, stage);
  EXPECT_EQ(stage.mismatches.size(), 1u);
  // Lane has no layout search; a satisfiable Warpgroup kernel is predicted to complete.
  EXPECT_TRUE(predict(case_from_json(rows_case("int32", value, "lane", 128, 4)), Profile::kMosaic)
                  .outcome.diagnostic->alternatives.empty());
}

TEST(VectorBroadcast, WarpgroupLowersAConstantColumnAndLaneNamesItsSplatLayout) {
  // float32[128, 4] = arange: y = broadcast_in_dim(3, (128, 4), (0,)) + tile = x + 3.
  const json value = op("add", broadcast_in_dim(json{128}, json{0}, {{"const", 3}}),
                        {{"load", {{"alloc", "tile"}}}});
  const Outcome o =
      predicted_and_simulated(case_from_json(rows_case("float32", value, "warpgroup", 128, 4)));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t e = 0; e < 512; ++e) ASSERT_EQ(simtest::y_at(o, e), static_cast<float>(e + 3));
  const Case lane = case_from_json(rows_case("float32", value, "lane", 128, 4));
  const Prediction p = predict(lane, Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value());
  EXPECT_EQ(p.outcome.diagnostic->message, "Unsupported layout: WGSplatFragLayout(shape=(128,))");
  EXPECT_EQ(simtest::lower_rejected(lane).message, p.outcome.diagnostic->message);
}

// tile_store_case with an input and tile of shape `from` and an output of shape `to`.
json reshaped_case(const std::string& dtype, const json& value, const std::string& semantics,
                   const json& from, const json& to) {
  json j = tile_store_case(dtype, value, semantics);
  j["inputs"][0]["shape"] = from;
  j["program"][0]["allocs"][0]["shape"] = from;
  j["outputs"][0]["shape"] = to;
  return j;
}

TEST(VectorBroadcast, ASizeOneDimBroadcastsBeforeTheDimsItKeepsOnly) {
  // float32[1, 128] = arange to (2, 128): the expanded dim comes first, so Lane tiles the
  // registers and Warpgroup lowers it: y[r, c] = x[0, c] = c.
  const json tile = {{"load", {{"alloc", "tile"}}}};
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Outcome o = predicted_and_simulated(case_from_json(reshaped_case(
        "float32", broadcast(json{1, 128}, tile), semantics, json{1, 128}, json{2, 128})));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics;
    for (std::int64_t e = 0; e < 256; ++e)
      ASSERT_EQ(simtest::y_at(o, e), static_cast<float>(e % 128)) << semantics << " " << e;
  }
  // float32[2, 1, 128] to (2, 3, 128): the expanded dim after a kept one. Lane refuses the
  // strided operand, Warpgroup's layout inference finds no layout; interpret mode computes
  // y[a, b, c] = x[a, 0, c] = 128a + c.
  for (const auto& [semantics, rule] :
       {std::pair{"lane", "lower.vector.strided_broadcast"},
        std::pair{"warpgroup", "dialect.vector.broadcast_layout"}}) {
    const Case k = case_from_json(reshaped_case("float32", broadcast(json{2, 1, 128}, tile),
                                                semantics, json{2, 1, 128}, json{2, 3, 128}));
    const Prediction p = predict(k, Profile::kMosaic);
    ASSERT_TRUE(p.outcome.diagnostic.has_value()) << semantics;
    EXPECT_EQ(p.outcome.diagnostic->rule, rule);
    const Diagnostic sim = simtest::lower_rejected(k);
    EXPECT_EQ(sim.rule, rule);
    EXPECT_EQ(sim.message, p.outcome.diagnostic->message);
    const Prediction interpret = predict(k, Profile::kInterpret);
    ASSERT_EQ(interpret.outcome.kind, OutcomeKind::kCompleted);
    for (std::int64_t e = 0; e < 768; ++e) {
      float got = 0;
      std::memcpy(&got, interpret.outcome.outputs.at(0).bytes.data() + e * 4, 4);
      ASSERT_EQ(got, static_cast<float>(e / 384 * 128 + e % 128)) << semantics << " " << e;
    }
  }
  EXPECT_EQ(predict(case_from_json(reshaped_case("float32", broadcast(json{2, 1, 128}, tile),
                                                 "lane", json{2, 1, 128}, json{2, 3, 128})),
                    Profile::kMosaic)
                .outcome.diagnostic->message,
            "Unsupported broadcast for WGStridedFragLayout");
  // The parser: a dim of neither the value's size nor 1; the same rank with nothing broadcast.
  simtest::expect_parse_refused(
      reshaped_case("float32", broadcast(json{2, 128}, tile), "lane", json{2, 128}, json{3, 128}),
      "$.program[0].body[2].value.broadcast.shape", "nor 1");
  simtest::expect_parse_refused(
      reshaped_case("float32", broadcast(json{2, 128}, tile), "lane", json{2, 128}, json{2, 128}),
      "$.program[0].body[2].value.broadcast.shape", "or the same with a dim of 1 broadcast");
}

}  // namespace
}  // namespace collfuzz
