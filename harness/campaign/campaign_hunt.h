// Bug-finding power of a real campaign: `collfuzz fuzz`'s loop (fast workers, the slow executors'
// pool with its novelty-ranked sampling, confirmation) run with one planted bug of the reference's
// interpret profile (harness/core/mutants.h) selected, until the first finding that the bug causes
// or the budget runs out. The reference is the bug's host, so a detection is a real executor
// (jax-interpret) disagreeing with the mutated reference. A finding counts only when the faithful
// reference does not disagree the same way with the executor's outcome on the same case (the
// outcome stored with the finding, held against the faithful prediction), and a divergence the
// baseline lists is never one. Only the mutant build (collfuzz_bugfind) links this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/mutants.h"
#include "harness/executors/executor.h"

namespace collfuzz::campaign {

struct CampaignHuntOptions {
  std::uint64_t seed = 1;
  double seconds = 300;
  std::vector<std::string> executors = {"jax-interpret"};
  std::int64_t jobs = 1;
  std::int64_t slow_jobs = 1;
  std::filesystem::path work;  // one campaign directory per mutant below it
  std::string baseline;        // known divergences ("": none)
  ExecutorOptions executor_options;
};

struct CampaignHunt {
  std::string mutant;
  bool detected = false;
  // From the start of the hunt: to the slow worker's verdict on the detecting case (the finding's
  // found.seconds; the slow worker starts with the campaign), and to the finding on disk (after
  // its confirmation reruns).
  double seconds_to_detection = 0;
  double seconds_to_report = 0;
  std::string signature;
  std::string executor;
  std::uint64_t index = 0;
  // At the last timeline record before the detection: the executor's compared cases and the fast
  // loop's cases.
  std::int64_t executor_cases = 0;
  std::int64_t fast_cases = 0;
  // Findings of the campaign not credited to the mutant (the faithful reference has them too).
  std::vector<std::string> not_caused;
  std::string error;
  std::filesystem::path out;
};

CampaignHunt hunt_in_campaign(Mutant mutant, const CampaignHuntOptions& options);

}  // namespace collfuzz::campaign
