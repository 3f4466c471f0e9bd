// Helpers for the lowering and simulator tests: cases written inline as JSON, lowered or run.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/lowering/lowering.h"
#include "harness/sim/simulator.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz::simtest {

inline Case parse_case(const std::string& text) {
  return case_from_json(nlohmann::json::parse(text));
}

// A case with the given mesh, target and program (JSON fragments) and one input x.
inline Case make_case(const std::string& mesh, const std::string& target, const std::string& inputs,
                      const std::string& program, const std::string& outputs = "[]") {
  return parse_case(R"({"format": 1, "name": "t", "mesh": )" + mesh + R"(, "target": )" + target +
                    R"(, "inputs": )" + inputs + R"(, "outputs": )" + outputs + R"(, "program": )" +
                    program + "}");
}

inline lowering::Plan lower_ok(const Case& c) {
  lowering::LoweringResult r = lowering::lower_case(c);
  EXPECT_FALSE(r.diagnostic.has_value()) << (r.diagnostic ? r.diagnostic->message : "");
  return std::move(r.plan);
}

inline Diagnostic lower_rejected(const Case& c) {
  lowering::LoweringResult r = lowering::lower_case(c);
  EXPECT_TRUE(r.diagnostic.has_value());
  return r.diagnostic.value_or(Diagnostic{});
}

inline const CtaRecord& cta(const Outcome& o, std::int64_t rank) {
  return o.ctas.at(static_cast<std::size_t>(rank));
}

inline const BarrierRecord* barrier(const CtaRecord& c, const std::string& alloc,
                                    std::int64_t index = 0) {
  for (const auto& b : c.barriers) {
    if (b.alloc == alloc && b.index == index) return &b;
  }
  return nullptr;
}

inline const BufferRecord* buffer(const CtaRecord& c, const std::string& alloc) {
  for (const auto& b : c.buffers) {
    if (b.alloc == alloc) return &b;
  }
  return nullptr;
}

// The reference's prediction for the compiler's profile, after checking that the simulator agrees
// with it on all three oracles (each mismatch a test failure).
inline Outcome predicted_and_simulated(const Case& c) {
  const Outcome expected = predict(c, Profile::kMosaic).outcome;
  sim::Simulator simulator;
  Outcome actual = simulator.run(c);
  actual.executor = "sim";
  EXPECT_NE(actual.kind, OutcomeKind::kUnavailable) << actual.reason;
  for (const Mismatch& m : compare(c, expected, actual).mismatches)
    ADD_FAILURE() << m.signature << ": " << m.detail;
  return expected;
}

// One CTA: x = arange DTYPE[256] from `start`; copies x into an SMEM tile, waits, and stores
// `value` (a vector value of the tile, {"load": {"alloc": "tile"}}) into y (docs/case-format.md,
// "vector_store").
inline nlohmann::json tile_store_case(const std::string& dtype, const nlohmann::json& value,
                                      const std::string& semantics, std::int64_t start = 0) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "format": 1, "name": "tile_store",
    "mesh": {},
    "target": {"arch": "sm_90a"},
    "inputs": [{"name": "x", "shape": [256], "fill": {"pattern": "arange", "step": 1}}],
    "outputs": [{"name": "y", "shape": [256]}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "tile", "kind": "smem", "shape": [256]},
        {"name": "bar", "kind": "barrier"}],
      "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tile"},
         "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
        {"op": "vector_store", "dst": {"output": "y"}}]}]
  })");
  j["target"]["semantics"] = semantics;
  j["inputs"][0]["dtype"] = dtype;
  j["inputs"][0]["fill"]["start"] = start;
  j["outputs"][0]["dtype"] = dtype;
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  j["program"][0]["body"][2]["value"] = value;
  return j;
}

// tile_store_case's values are written with these: its tile, a constant, a binary op.
inline nlohmann::json tile() { return {{"load", {{"alloc", "tile"}}}}; }
inline nlohmann::json c(std::int64_t v) { return {{"const", v}}; }
inline nlohmann::json op(const char* name, const nlohmann::json& a, const nlohmann::json& b) {
  return {{name, {a, b}}};
}

// An 8-bit tile_store_case whose `value` holds arithmetic, under Lane and then Warpgroup: the
// reference and the lowering both refuse it as lower.vector.pointwise_8bit, at stage lower under
// Lane and dialect under Warpgroup, and interpret mode (XLA, no 8-bit restriction) computes it.
inline void expect_refused_as_8bit_arithmetic(const std::string& dtype,
                                              const nlohmann::json& value) {
  for (const auto& [semantics, stage] :
       {std::pair{"lane", "lower"}, std::pair{"warpgroup", "dialect"}}) {
    const Case k = case_from_json(tile_store_case(dtype, value, semantics));
    const Prediction p = predict(k, Profile::kMosaic);
    ASSERT_TRUE(p.outcome.diagnostic.has_value()) << semantics;
    EXPECT_EQ(p.outcome.diagnostic->rule, "lower.vector.pointwise_8bit");
    EXPECT_EQ(p.outcome.diagnostic->stage, stage);
    const Diagnostic lowered = lower_rejected(k);
    EXPECT_EQ(lowered.rule, "lower.vector.pointwise_8bit");
    EXPECT_EQ(lowered.stage, stage);
    EXPECT_EQ(predict(k, Profile::kInterpret).outcome.kind, OutcomeKind::kCompleted) << semantics;
  }
}

// The case reader refuses `j` with an InputError naming `field` ("FIELD: ...") and saying `words`.
inline void expect_parse_refused(const nlohmann::json& j, const std::string& field,
                                 const std::string& words) {
  try {
    case_from_json(j);
    ADD_FAILURE() << j["program"].dump() << " parsed";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(field + ": "), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

// The case's parse error, or "parsed".
inline std::string parse_error(const nlohmann::json& j) {
  try {
    case_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "parsed";
}

// Element e of the first output, read as float32.
inline float y_at(const Outcome& o, std::int64_t e) {
  float v = 0;
  std::memcpy(&v, o.outputs.at(0).bytes.data() + e * 4, 4);
  return v;
}

// A wait on barrier "bar", index 0.
inline const nlohmann::json kWait =
    nlohmann::json::parse(R"({"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}})");

inline constexpr const char* kLane = R"({"arch": "sm_90a", "semantics": "lane"})";
inline constexpr const char* kWarpgroup = R"({"arch": "sm_90a", "semantics": "warpgroup"})";

}  // namespace collfuzz::simtest
