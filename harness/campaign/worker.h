// One worker of a campaign: runs case index worker, worker + jobs, worker + 2 jobs, ... of the
// seed's stream through the differential check; reports each new signature at once (the case as
// found), then shrinks it and reports it again; saves its state every second. Runs in a worker
// process under the supervisor, or in-process (the benchmark, the bug-finding measurement).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "harness/campaign/campaign_state.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/case_shrinker.h"
#include "harness/campaign/confirmation.h"
#include "harness/campaign/findings_store.h"
#include "harness/campaign/worker_board.h"
#include "harness/runner/known_jax_bugs.h"

namespace collfuzz::campaign {

struct WorkerConfig {
  std::uint64_t seed = 1;
  std::int64_t worker = 0;
  std::int64_t jobs = 1;
  Shard shard;  // state.next_index counts the shard's cases; shard.global() is the seed's index
  std::int64_t case_limit = 0;  // stop before index >= case_limit (0: none)
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool shrink = true;
  ShrinkLimits shrink_limits;
  std::int64_t stop_after_findings = 0;  // 0: never
  ConfirmPolicy confirm;  // disagreements of nondeterministic executors are rerun first
  // Known divergences (CampaignOptions::known): counted in the state's signatures, recorded once
  // under <out>/known/, never reported as findings. Null: none.
  const std::map<std::string, std::string>* known = nullptr;
  // Known JAX bugs (CampaignOptions::known_bugs): a disagreement whose executor and detail match
  // an entry is recorded under <out>/known/ with the entry, never reported as a finding. Null:
  // none.
  const KnownJaxBugs* known_bugs = nullptr;
  // A slow pool worker: where its next case index comes from (nullopt: none queued yet; the
  // worker waits a little) instead of the stream worker, worker + jobs, ...; its state is not
  // advanced.
  std::function<std::optional<std::uint64_t>()> next_index;
  // A slow pool worker: the one executor that runs the case next_index() gave (the pool sets it
  // at each pick, so each slow executor gets its own cases and its own share of the time); null:
  // every executor of the check.
  const std::string* only_executor = nullptr;
  // Called after each case is checked (a fast worker offers it to the slow pool).
  // `coverage` is the worker's own tally, for predictions made there (the pool's offers predict
  // the profiles only slow executors check: docs/fuzzing.md "The slow executors' pool").
  std::function<void(std::uint64_t index, const Case& c, generators::RuleCoverage* coverage)>
      after_case;
};

struct FindingEvent {
  std::string signature;
  std::uint64_t index = 0;
  double seconds_to_detection = 0;  // from the start of run() to the check that found it
  CaseSize original;
  CaseSize shrunk;
  double shrink_seconds = 0;
  std::filesystem::path case_file;
};

class Worker {
 public:
  // `store` may be null (count signatures, report nothing); `dir` null: save no state; `slot` and
  // `stop` may be null (in-process runs).
  Worker(WorkerConfig config, CaseCheck& check, FindingsStore* store, const CampaignDirectory* dir,
         WorkerSlot* slot, const std::atomic<int>* stop);

  // Runs until the budget is spent or the stop flag is set; returns the state to save.
  WorkerState run(WorkerState state);

  std::function<void(const FindingEvent&)> on_finding;
  // Disagreements that did not repeat on every confirmation rerun.
  std::int64_t flaky() const { return flaky_; }

 private:
  WorkerConfig config_;
  CaseCheck& check_;
  FindingsStore* store_;
  const CampaignDirectory* dir_;
  WorkerSlot* slot_;
  const std::atomic<int>* stop_;
  std::int64_t findings_ = 0;
  std::int64_t flaky_ = 0;
  std::map<std::string, int> flaky_times_;    // per signature: confirmations that were flaky
  std::optional<FindingsStore> known_store_;  // <out>/known: the first case of each known one
  std::chrono::steady_clock::time_point started_;

  void report(const std::string& signature, std::uint64_t index, const Case& c, double seconds,
              const std::optional<Confirmation>& confirmation);
  void publish_rules(const generators::RuleCoverage& coverage);
  // `bug`: the known JAX bug it matched; null for a baseline entry.
  void record_known(const std::string& signature, std::uint64_t index, const Case& c,
                    const KnownJaxBug* bug = nullptr);
};

}  // namespace collfuzz::campaign
