// The board the supervisor and its worker processes share (in shared memory): the stop flag, and
// per worker the case index and phase it is on (so that a crash or a hang is attributed to the
// case and the part of collfuzz that caused it), and live counters for the progress line.
#pragma once

#include <atomic>
#include <cstdint>

#include "generators/rule_coverage.h"
#include "harness/campaign/campaign_options.h"
#include "harness/campaign/executor_tally.h"
#include "harness/process/process_groups.h"

namespace collfuzz::campaign {

struct WorkerSlot {
  std::atomic<std::uint64_t> current_index{0};
  std::atomic<std::uint32_t> phase{0};
  std::atomic<std::int64_t> cases{0};        // cases run by this worker in this run
  std::atomic<std::int64_t> total_cases{0};  // cases run by this worker over the campaign
  // The worker's rule coverage over the campaign, kept here rather than in the process, so that
  // it survives the worker (written only by the worker; read by the supervisor after it died).
  generators::RuleCoverage coverage;
  std::atomic<std::int64_t> findings{0};   // signatures it reported
  std::atomic<std::uint64_t> rules_lo{0};  // bit r: rule r fired (r < 64)
  std::atomic<std::uint64_t> rules_hi{0};  // bit r-64
  std::atomic<std::uint32_t> profiles{
      0};  // bit p: profile p was predicted (RuleCoverage::profile_bits)
  std::atomic<std::int64_t> heartbeat{0};  // bumped by every case and every shrink candidate
  // The process groups of the executors the worker started: the supervisor kills what is left
  // of them when the worker dies (killed as hung, at the budget's end, or by anyone).
  process::GroupTable groups;
  // Per executor of this worker (worker_executors() order): compared cases and rules reached.
  ExecutorTally executors[kMaxTalliedExecutors];
};

// A worker's exit status when the disk is full: the campaign stops (exit 3) instead of
// restarting it.
inline constexpr int kWorkerExitDiskFull = 75;

struct WorkerBoard {
  std::atomic<int> stop{0};
  WorkerSlot slots[kMaxJobs];
};

}  // namespace collfuzz::campaign
