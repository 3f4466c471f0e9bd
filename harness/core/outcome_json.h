// The JSON form of an outcome (docs/outcome-format.md). Expected outcomes written by hand may give
// a buffer's bytes as regions copied from inputs instead of hex; parsing resolves them against
// the case.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz {

nlohmann::json outcome_to_json(const Outcome& o, bool with_bytes = true);
// `path` prefixes error paths (e.g. "corpus/x.json:$.expect").
Outcome outcome_from_json(const nlohmann::json& j, const Case& c, const std::string& path);

// The allocation named `name` anywhere in the program, or nullptr.
const Alloc* find_alloc(const Case& c, const std::string& name);
const ArraySpec* find_array(const std::vector<ArraySpec>& arrays, const std::string& name);

std::string to_hex(const std::vector<std::uint8_t>& bytes);

}  // namespace collfuzz
