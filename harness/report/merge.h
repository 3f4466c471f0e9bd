// `collfuzz merge`: the finding folders of any number of campaign runs (shards on N machines, or
// runs merged before) made into one: findings deduplicated by signature, grouped by root-cause
// group when the outcomes name one, the smallest case kept; statistics summed; each run's
// provenance (its host, shard, seed and any other field its summary carries) kept in a list; one
// summary.json and summary.md written like a campaign's. Deterministic in its inputs, so merging
// again gives the same files; every file written atomically; a partial or corrupt input file is
// reported and skipped.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace collfuzz::report {

struct MergeResult {
  nlohmann::json summary;
  std::vector<std::string> problems;  // the input files skipped, and why
};

// Throws InputError when an input is not a directory or `into` is one of the inputs.
MergeResult merge_runs(const std::vector<std::filesystem::path>& inputs,
                       const std::filesystem::path& into);

// summary.md of a merged summary: a campaign's, then the runs and the skipped files.
std::string merged_summary_markdown(const nlohmann::json& summary);

}  // namespace collfuzz::report
