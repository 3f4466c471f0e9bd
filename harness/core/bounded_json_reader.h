// The one JSON reader for everything collfuzz parses: case files, outcome files, baselines,
// campaign state and executor answer lines. It reads through nlohmann's SAX interface and checks
// the limits of limits.h WHILE it reads (bytes, nesting depth, element count, string length), so
// memory stays proportional to the limits whatever the input, and it refuses what nlohmann's
// DOM parser accepts silently: duplicate keys, and numbers beyond a double (1e400, a 100,000-digit
// integer). Every refusal is an InputError naming the source and the JSON path
// ("corpus/x.json:$.program[2].op: ..."), which the CLI turns into exit code 2
// (docs/case-format.md, "Input limits").
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/limits.h"

namespace collfuzz {

struct JsonLimits {
  std::int64_t max_bytes = limits::kMaxJsonBytes;
  int max_depth = limits::kMaxJsonDepth;
  std::int64_t max_elements = limits::kMaxJsonElements;
  std::int64_t max_string_bytes = limits::kMaxJsonStringBytes;
};

// Parses `text`; `source` names it in errors (a file name, "sim:answer").
nlohmann::json parse_json_bounded(std::string_view text, const std::string& source,
                                  const JsonLimits& limits = {});

// Reads and parses an open stream (a file or standard input) without holding its bytes: only the
// DOM, bounded by the limits, is kept.
nlohmann::json parse_json_stream(std::FILE* in, const std::string& source,
                                 const JsonLimits& limits = {});

// Reads and parses a file; a file that cannot be read is an InputError naming it.
nlohmann::json load_json_file(const std::filesystem::path& file, const JsonLimits& limits = {});

}  // namespace collfuzz
