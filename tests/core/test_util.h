// Helpers shared by the tests: building cases from JSON text.
#pragma once

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"

namespace collfuzz::testing {

// A valid minimal case (one CTA, a 128x64 f32 copy), as JSON, for tests to modify.
inline nlohmann::json minimal_case_json() {
  return nlohmann::json::parse(R"({
    "format": 1, "name": "t",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a", "semantics": "lane"},
    "inputs": [{"name": "x", "shape": [128, 64], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
        {"name": "bar", "kind": "barrier", "num_arrivals": 1}],
      "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
         "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]
  })");
}

inline Case parse(const nlohmann::json& j) { return case_from_json(j); }

// The first copy of a case whose program is one run_scoped block that starts with a copy.
inline const CopyGmemToSmem& first_copy(const Case& c) {
  return std::get<CopyGmemToSmem>(std::get<RunScoped>(c.program[0].v).body[0].v);
}

// The parser's error for a case ("" when it parses).
inline std::string error_of(const nlohmann::json& j) {
  try {
    case_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The JSON path the reader names when it refuses `j` ("" when it reads it).
inline std::string error_path_of(const nlohmann::json& j) {
  try {
    case_from_json(j);
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}

}  // namespace collfuzz::testing
