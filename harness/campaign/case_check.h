// The differential check of one case: the reference's prediction for each executor's profile
// (for the case's own target profile when no executor runs), each executor's outcome, and the
// three oracles' verdicts. An exception thrown by the reference, an executor or an oracle is itself
// a disagreement, with a signature of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generators/rule_coverage.h"
#include "harness/campaign/executor_tally.h"
#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "harness/executors/executor.h"
#include "oracles/verdict.h"

namespace collfuzz::campaign {

// What a worker is doing, kept in shared memory so that the supervisor can say which part of
// collfuzz a crashed worker died in. Executor k is kFirstExecutor + k.
enum Phase : std::uint32_t {
  kGenerate = 0,
  kReference = 1,
  kCompare = 2,
  kShrink = 3,
  kFirstExecutor = 4
};

struct ExecutorReport {
  std::string executor;
  Outcome outcome;
  Verdict verdict;
};

struct CaseReportFull {
  std::map<Profile, Outcome> reference;  // every prediction made
  std::vector<ExecutorReport> executors;
  std::vector<Mismatch> mismatches;  // every executor's, in executor order
  // Each mismatch's root-cause group (root_cause.h), by signature.
  std::map<std::string, std::string> groups;
  // The group of `signature` (the signature itself when this report does not have it).
  std::string group_of(const std::string& signature) const;
};

class CaseCheck {
 public:
  CaseCheck(std::vector<std::unique_ptr<Executor>> executors, DiagnosticLevel level);

  // The mismatches of every executor against the reference (the campaign's hot path). Records
  // the reference's predictions in `coverage` when it is non-null.
  // With a case `index`, an executor whose sample_every() is n runs on one case in n, chosen by
  // sampled_case() (slow_sampling.h) so that every worker feeds it evenly;
  // without one (shrinking, reports) every executor runs.
  // `stream`: a case of the campaign's stream even without an index (the slow pool's): its
  // compared runs are tallied (set_tallies). With `only`, just the executor of that name runs (a
  // shrink candidate needs only the executor whose signature it keeps: a slow JAX executor is not
  // run on every candidate).
  std::vector<Mismatch> mismatches(const Case& c, generators::RuleCoverage* coverage = nullptr,
                                   std::optional<std::uint64_t> index = std::nullopt,
                                   const std::string* only = nullptr, bool stream = false);
  // Everything, for a finding's report.
  CaseReportFull full(const Case& c);

  // Called before executor k runs a case (outcome null) and after (its outcome, or a crash
  // outcome when it threw), with the seconds it took: the slow pool counts timeouts and stalls.
  using RunObserver = std::function<void(std::size_t k, const Outcome* outcome, double seconds)>;
  void set_run_observer(RunObserver observer) { observer_ = std::move(observer); }
  // Where to record the phase (a word in shared memory), or null.
  void set_phase_word(std::atomic<std::uint32_t>* word) { phase_ = word; }
  // Where to count each executor's compared stream cases and the rules they reached (an array of
  // at least executors().size() or kMaxTalliedExecutors entries, in shared memory), or null.
  void set_tallies(ExecutorTally* tallies) { tallies_ = tallies; }
  const std::vector<std::unique_ptr<Executor>>& executors() const { return executors_; }
  std::vector<std::string> executor_names() const;
  // The name of a phase, for a crash signature: "reference", an executor's name, ...
  std::string phase_name(std::uint32_t phase) const;
  // The unavailable runs of stream cases (called with an index) since the last call, by
  // "<executor>: <reason class>" (undefined_behaviour.h); a run that met undefined behaviour where
  // the reference predicts a defined outcome is a mismatch instead.
  std::map<std::string, std::int64_t> take_unavailable() { return std::exchange(unavailable_, {}); }
  // The runs of each executor on stream cases since the last call (the summary's health checks).
  std::map<std::string, std::int64_t> take_runs() { return std::exchange(runs_, {}); }

 private:
  std::vector<std::unique_ptr<Executor>> executors_;
  DiagnosticLevel level_;
  std::atomic<std::uint32_t>* phase_ = nullptr;
  ExecutorTally* tallies_ = nullptr;
  RunObserver observer_;
  std::map<std::string, std::int64_t> unavailable_;
  std::map<std::string, std::int64_t> runs_;

  void tally(std::size_t k, const Outcome& expected);
  void enter(std::uint32_t phase) {
    if (phase_) phase_->store(phase, std::memory_order_relaxed);
  }
  const Outcome& prediction(const Case& c, Profile p, std::map<Profile, Outcome>& cache,
                            std::vector<Mismatch>& out);
};

// The signature of an exception thrown in `phase` (crash:exception:<phase>:<executor>).
std::string exception_signature(const std::string& phase, const std::string& executor);

}  // namespace collfuzz::campaign
