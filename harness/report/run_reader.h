// Reading a campaign directory (or a merged one) back for `collfuzz merge` and `collfuzz report`:
// its summary.json, each finding's outcomes and case file, and its timeline.jsonl. Every file is
// read defensively: one that is missing, partial (a copy cut short) or not what it should be is
// reported in `problems` and skipped, never trusted and never a crash.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace collfuzz::report {

struct FindingFiles {
  std::string signature;
  std::string group;  // the root-cause group when the outcomes file names one, else the signature
  std::filesystem::path outcomes_file;
  std::filesystem::path case_file;
  std::optional<std::filesystem::path> python_file;  // a reproducer beside the case, when present
  // SIGNATURE.reproduced.json beside the outcomes (the campaign ran the script once,
  // finding_repro_run.h): its file and content; null when the campaign recorded none.
  std::optional<std::filesystem::path> reproduced_file;
  nlohmann::json reproduced;
  nlohmann::json outcomes;
  std::int64_t ops = 0, ctas = 0, elements = 0;  // the case's size ("size" of the outcomes)
};

struct RunDirectory {
  std::filesystem::path dir;
  std::optional<nlohmann::json> summary;  // absent when summary.json is missing or unreadable
  std::vector<FindingFiles> findings;
  std::vector<nlohmann::json> timeline;  // the lines of timeline.jsonl that parse
  std::vector<std::string> problems;     // "<file>: <what is wrong>", one per skipped file
};

// The lines of a JSON-lines file that parse as objects (a line cut short is skipped).
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& file);

RunDirectory read_run_directory(const std::filesystem::path& dir);

// Parses a whole JSON file; nullopt (and the reason in `error`) when it does not parse.
std::optional<nlohmann::json> read_json_file(const std::filesystem::path& file, std::string& error);

}  // namespace collfuzz::report
