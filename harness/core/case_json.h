// The JSON form of a case (docs/case-format.md): strict parsing with JSON-path errors, semantic
// validation (names resolve, sizes fit the limits), and serialisation.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case.h"

namespace collfuzz {

// Parses and validates; throws InputError naming the JSON path of the first problem.
Case case_from_json(const nlohmann::json& j);
nlohmann::json case_to_json(const Case& c);

// Reads a case file (the file name prefixes every error path). The file's `expect` member, if
// any, is returned through `expect` when it is non-null.
// The file is read by the bounded reader (bounded_json_reader.h, which declares load_json_file).
Case load_case_file(const std::filesystem::path& file, nlohmann::json* expect = nullptr);

// The same JSON, with the ops renumbered: call after editing a case's program (the shrinker).
void renumber_paths(Case& c);

}  // namespace collfuzz
