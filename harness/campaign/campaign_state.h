// What a campaign persists so that `--resume` continues it: campaign.json (the seed, executors,
// level, jobs and budget it was started with) and one state file per worker (the next case index
// of its seed stream, its counters, its rule coverage, how often it saw each signature). Every
// file is written atomically; a worker saves its state every second and when it stops, so a
// campaign killed at any moment loses at most a second of counts and none of its findings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "generators/rule_coverage.h"
#include "harness/campaign/campaign_options.h"

namespace collfuzz::campaign {

struct WorkerState {
  std::int64_t worker = 0;
  std::uint64_t next_index = 0;  // the next case index of the seed's stream (worker + n * jobs)
  std::int64_t cases = 0;
  double seconds = 0;  // time spent running cases, over every run of the campaign
  std::int64_t crashes = 0;
  generators::RuleCoverage coverage;
  std::map<std::string, std::int64_t> signatures;  // how often each signature was seen
  // Unavailable runs by "<executor>: <reason class>" (undefined_behaviour.h).
  std::map<std::string, std::int64_t> unavailable;
  std::map<std::string, std::int64_t> runs;  // each executor's runs (not counting shrinking)

  nlohmann::json to_json() const;
  static WorkerState from_json(const nlohmann::json& j);
};

class CampaignDirectory {
 public:
  explicit CampaignDirectory(std::filesystem::path out);

  const std::filesystem::path& out() const { return out_; }
  std::filesystem::path findings() const { return out_ / "findings"; }
  std::filesystem::path worker_file(std::int64_t worker) const;

  bool has_campaign() const;
  // The options a campaign was started with (resume reads them back).
  void save_options(const CampaignOptions& o) const;
  CampaignOptions load_options() const;

  void save_worker(const WorkerState& s) const;
  // The worker's saved state, or a fresh one starting at index `worker`.
  WorkerState load_worker(std::int64_t worker) const;

 private:
  std::filesystem::path out_;
};

}  // namespace collfuzz::campaign
