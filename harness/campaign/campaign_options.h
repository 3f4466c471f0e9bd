// What a campaign runs: its seed, budget, executors, worker processes and output directory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/shard.h"
#include "harness/core/jax_version.h"
#include "harness/executors/executor.h"
#include "harness/runner/known_jax_bugs.h"
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
  // Run each finding's script once (finding_repro_run.h); --no-script-runs: not in this session.
  bool run_scripts = true;
  DiagnosticLevel level = DiagnosticLevel::kMessage;
  ExecutorOptions executor_options;
  // Worker processes of the slow executors' pool (slow_pool.h); 0: the slow executors run in the
  // fast workers, on one case in sample_every().
  std::int64_t slow_jobs = 1;
  std::int64_t offer_every = 8;  // a fast worker offers one case in this many to the slow pool
  std::int64_t confirm = 5;      // --confirm: reruns of a nondeterministic disagreement
  std::vector<std::string> confirm_executors;  // --confirm-executors: always nondeterministic
  Shard shard;  // part of the seed's stream this campaign runs (--shard, or the engine's)
  // A worker that makes no progress this long is killed (a hang finding); 0: derived from the
  // executors' --timeout (worker_hang_seconds()).
  double hang_seconds = 0;
  // A worker is killed as hung only after an external executor has had its whole --timeout on
  // one case (that executor reports the case as a timeout and is restarted; the worker goes on):
  // at least 60 s and --timeout + 30 s, unless hang_seconds says otherwise.
  double worker_hang_seconds() const {
    return hang_seconds > 0 ? hang_seconds
                            : std::max(60.0, executor_options.case_timeout_seconds + 30);
  }
  // --baseline: known divergences (signature -> its reason). A campaign matches an entry by its
  // signature (which names the executor), whatever its case: a generated case never has a
  // corpus case's name. A known divergence is counted (summary "known"), never a finding. Given
  // again (or the default file) by each session, not saved with the campaign.
  std::string baseline;
  bool allow_unavailable = false;  // a campaign that compared nothing exits 0, not 1
  std::map<std::string, std::string> known;
  // --known-bugs (default: ci/known-jax-bugs.json, found as the baseline is): known JAX bugs,
  // matched by executor and message (known_jax_bugs.h); counted as known, never findings.
  std::string known_bugs_file;
  // --replay-rates: per executor, the cases/s of a `collfuzz replay --json-out` run (compared
  // cases over their seconds), shown beside the slow pool's rates; empty: not given.
  std::map<std::string, double> replay_rates;
  std::shared_ptr<const KnownJaxBugs> known_bugs;
  // --jax: every generated case is pinned to this release and judged by its reference; a JAX
  // executor running another release is not compared (a version mismatch). nullopt: unpinned.
  std::optional<JaxVersion> jax;
};

// Every registered executor that can run on this machine (its unavailable_reason() is empty).
std::vector<std::string> available_executors(const ExecutorOptions& options);

struct UnavailableExecutor {
  std::string executor;
  std::string reason;
};

// Which of `executors` cannot run on this machine by the cheap check (unavailable_reason():
// nothing is started, a missing program, no GPU), so that a campaign in which none can compare
// anything is refused before it starts. One that passes it may still compare nothing (a Python
// without JAX answers every case unavailable): the campaign decides that at its end, from each
// executor's compared runs ("nothing compared", docs/cli.md), as run and replay do.
std::vector<UnavailableExecutor> unavailable_executors(const std::vector<std::string>& executors,
                                                       const ExecutorOptions& options);

}  // namespace collfuzz::campaign
