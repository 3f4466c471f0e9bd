// Building small cases for the reference checker's tests, and reading predictions.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/case_json.h"
#include "oracles/reference/reference.h"

namespace collfuzz::testing {

using nlohmann::json;

// A case: `mesh`, one run_scoped with `allocs` around `body`, input x of `src_shape`.
inline json make_case(json mesh, json allocs, json body, json src_shape = {128, 64},
                      std::string dtype = "float32", std::string arch = "sm_90a",
                      std::string semantics = "lane", std::string profile = "mosaic") {
  if (mesh.is_null()) mesh = json::object();
  return json{
      {"format", 1},
      {"name", "t"},
      {"mesh", mesh},
      {"target", {{"arch", arch}, {"semantics", semantics}, {"profile", profile}}},
      {"inputs", json::array({{{"name", "x"}, {"shape", src_shape}, {"dtype", dtype}}})},
      {"program", json::array({{{"op", "run_scoped"}, {"allocs", allocs}, {"body", body}}})}};
}

inline json smem(const char* name, json shape, std::string dtype = "float32") {
  return {{"name", name}, {"kind", "smem"}, {"shape", shape}, {"dtype", dtype}};
}
inline json barrier(const char* name, int num_arrivals = 1) {
  return {{"name", name}, {"kind", "barrier"}, {"num_arrivals", num_arrivals}};
}
// The allocations most rule tests use: a 128x64 float32 "dst" and one barrier "bar".
inline const json kAllocs = json::array({smem("dst", {128, 64}), barrier("bar")});
inline json copy(json extra = json::object()) {
  json c = {{"op", "copy_gmem_to_smem"},
            {"src", {{"input", "x"}}},
            {"dst", {{"alloc", "dst"}}},
            {"barrier", {{"alloc", "bar"}}}};
  for (auto& [k, v] : extra.items()) c[k] = v;
  return c;
}
inline json wait(const char* bar = "bar") {
  return {{"op", "barrier_wait"}, {"barrier", {{"alloc", bar}}}};
}
inline json when(json cond, json body) { return {{"op", "when"}, {"cond", cond}, {"body", body}}; }

inline Outcome outcome_of(const json& j, Profile profile = Profile::kMosaic) {
  return predict(case_from_json(j), profile).outcome;
}

// Asserts the case is rejected by `rule` with exactly `message`.
inline void expect_rejected(const json& j, const std::string& rule, const std::string& message,
                            Profile profile = Profile::kMosaic) {
  const Outcome o = outcome_of(j, profile);
  ASSERT_EQ(o.kind, OutcomeKind::kRejected) << "accepted: " << j.dump();
  EXPECT_EQ(o.diagnostic->rule, rule) << o.diagnostic->message;
  EXPECT_EQ(o.diagnostic->message, message);
}

inline const BarrierRecord& barrier_of(const Outcome& o, std::int64_t rank,
                                       const std::string& alloc) {
  for (const auto& b : o.ctas.at(static_cast<std::size_t>(rank)).barriers) {
    if (b.alloc == alloc) return b;
  }
  throw std::runtime_error("no barrier " + alloc);
}

}  // namespace collfuzz::testing
