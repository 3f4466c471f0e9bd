// What a campaign runs: its seed, budget, executors, worker processes and output directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/campaign/shard.h"
#include "harness/executors/executor.h"
#include "oracles/verdict.h"

namespace collfuzz::campaign {

inline constexpr std::int64_t kMaxJobs = 64;

struct CampaignOptions {
  std::uint64_t seed = 1;
  double seconds = 0;      // 0: no time limit
  std::int64_t cases = 0;  // 0: no case limit (total over every worker and every resumed run)
  std::vector<std::string> executors;
  std::int64_t jobs = 1;
  std::filesystem::path out = "fuzz-out";
  bool resume = false;
  bool shrink = true;
  DiagnosticLevel level = DiagnosticLevel::kMessage;
  ExecutorOptions executor_options;
  Shard shard;  // part of the seed's stream this campaign runs (--shard, or the engine's)
  double hang_seconds = 60;  // a worker that makes no progress this long is killed (a hang finding)
};

// Every registered executor that can run on this machine (its unavailable_reason() is empty).
std::vector<std::string> available_executors(const ExecutorOptions& options);

}  // namespace collfuzz::campaign
