// Helpers for the lowering and simulator tests: cases written inline as JSON, lowered or run.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/case_json.h"
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

inline constexpr const char* kLane = R"({"arch": "sm_90a", "semantics": "lane"})";
inline constexpr const char* kWarpgroup = R"({"arch": "sm_90a", "semantics": "warpgroup"})";

}  // namespace collfuzz::simtest
