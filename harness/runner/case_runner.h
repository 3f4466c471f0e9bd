// Runs one case: the reference's prediction (checked against the case's stored expectation, if
// any), then every executor, each held against the reference's prediction for its profile.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "harness/executors/executor.h"
#include "oracles/verdict.h"

namespace collfuzz {

class Baseline;

// A stored diagnostic given as exception and message alone (no rule, docs/case-format.md
// "Expectations"): its rule becomes the predicted one where that rule's template fits, else the
// rule table's first that fits. Given as exception and message_regex (assertRaisesRegex), its rule
// becomes the predicted one where the exception is the same and the regex occurs in the message.
void complete_stored_rule(Outcome& stored, const Outcome& predicted);

struct ExecutorResult {
  std::string executor;
  Outcome outcome;
  Verdict verdict;
  std::vector<std::string> known;  // signatures the baseline lists as expected divergences
  double seconds = 0;
  // The JAX release the executor said it runs (its hello's jax_version), and the one its outcome
  // was judged by; empty for executors without one (reference, sim, cuda).
  std::string jax_version;
  std::string judged_jax;
  bool version_mismatch = false;  // the case is pinned to another JAX release: not compared
};

struct CaseReport {
  std::string file;
  std::string name;
  Outcome reference;               // for the case's target profile
  std::optional<Verdict> stored;   // reference vs. the case's `expect`, when checked
  std::string stored_skip_reason;  // why the stored expectation was not checked
  std::vector<ExecutorResult> results;
  // The second comparison (CaseRunner::also_compare_against): the same runs held against another
  // profile's prediction, for the executors whose own profile is another. Outcomes are not kept
  // here (results has them); `known` is the second baseline's.
  std::vector<ExecutorResult> also;
  std::string also_profile;  // the profile of `also` ("mosaic"), when it is asked for
};

// What a run compared: each check (an executor's verdict, or the reference against a stored
// expectation) passed, failed or was skipped (the executor did not run the case: unavailable).
// A run in which nothing was compared must not pass as green (docs/cli.md, "nothing compared").
class CheckCounts {
 public:
  void add(const CaseReport& report);
  // Adds another run's counts (cases replayed apart, in file order: `other` came after).
  void merge(const CheckCounts& other);

  int passed() const { return passed_; }
  int failed() const { return failed_; }
  int skipped() const { return skipped_; }
  bool nothing_compared() const { return passed_ + failed_ == 0; }
  // "nothing was compared: ... (0 passed, 0 failed, N skipped (unavailable)); cuda: why".
  std::string nothing_compared_message() const;
  // Executors that ran no case, each with the last reason it gave.
  std::vector<std::pair<std::string, std::string>> never_ran() const;

 private:
  struct Tally {
    int ran = 0;
    std::string reason;
  };
  int passed_ = 0;
  int failed_ = 0;
  int skipped_ = 0;
  std::vector<std::pair<std::string, Tally>> executors_;  // in the order first seen
  Tally& tally(const std::string& executor);
};

class CaseRunner {
 public:
  // `executors` may include "reference" (check stored expectations) and any registered names.
  CaseRunner(const std::vector<std::string>& executors, const ExecutorOptions& options,
             DiagnosticLevel level, const Baseline* baseline = nullptr);

  // Hold every executor against the reference's prediction for `profile` rather than its own.
  void compare_against(std::optional<Profile> profile) { compare_profile_ = profile; }
  // Also hold every executor whose own profile is not `profile` against `profile`'s prediction,
  // with `baseline`'s known divergences (CaseReport::also): one run of JAX's interpret mode then
  // gives both its own comparison and the one against the compiler.
  void also_compare_against(Profile profile, const Baseline* baseline) {
    also_profile_ = profile;
    also_baseline_ = baseline;
  }
  // Judge every case by this JAX release (--jax), as if its target.jax named it.
  void pin_jax(std::optional<JaxVersion> v) { jax_override_ = v; }
  ~CaseRunner();

  CaseReport run(const Case& c, const nlohmann::json* expect, const std::string& file);
  // The reference's prediction for `profile`, cached for the case last run.
  const Outcome& reference(const Case& c, Profile profile);

 private:
  // The reference held against the stored expectation(s) (`expect`, stored_expectation.h).
  Verdict check_stored(const Case& c, const nlohmann::json& expect, const std::string& file);

  bool check_reference_ = false;
  std::vector<std::unique_ptr<Executor>> executors_;
  DiagnosticLevel level_;
  const Baseline* baseline_;
  std::optional<Profile> compare_profile_;
  std::optional<Profile> also_profile_;
  const Baseline* also_baseline_ = nullptr;
  std::optional<JaxVersion> jax_override_;
  const Case* cached_case_ = nullptr;
  std::map<std::pair<Profile, JaxVersion>, Outcome> cache_;
};

}  // namespace collfuzz
