#include "harness/runner/case_runner.h"

#include <chrono>

#include "harness/core/outcome_json.h"
#include "harness/runner/baseline.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz {

CaseRunner::CaseRunner(const std::vector<std::string>& executors, const ExecutorOptions& options,
                       DiagnosticLevel level, const Baseline* baseline)
    : level_(level), baseline_(baseline) {
  for (const auto& name : executors) {
    if (name == "reference") {
      check_reference_ = true;
    } else {
      executors_.push_back(make_executor(name, options));
    }
  }
}

CaseRunner::~CaseRunner() = default;

const Outcome& CaseRunner::reference(const Case& c, Profile profile) {
  if (cached_case_ != &c) {
    cache_.clear();
    cached_case_ = &c;
  }
  auto it = cache_.find(profile);
  if (it == cache_.end()) it = cache_.emplace(profile, predict(c, profile).outcome).first;
  return it->second;
}

CaseReport CaseRunner::run(const Case& c, const nlohmann::json* expect, const std::string& file) {
  cached_case_ = nullptr;
  CaseReport report;
  report.file = file;
  report.name = c.name;
  report.reference = reference(c, c.target.profile);
  if (check_reference_) {
    if (expect && !expect->is_null()) {
      Outcome stored = outcome_from_json(*expect, c, file + ":$.expect");
      stored.executor = "expect";
      Verdict v = compare(c, stored, report.reference, level_);
      v.executor = "reference";
      for (auto& m : v.mismatches)
        m.signature = make_signature(m.oracle, m.kind, m.what, "reference");
      report.stored = std::move(v);
    } else {
      report.stored_skip_reason = "the case stores no expected outcome";
    }
  }
  for (auto& ex : executors_) {
    ExecutorResult r;
    r.executor = ex->name();
    const auto start = std::chrono::steady_clock::now();
    r.outcome = ex->run(c);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.outcome.executor = ex->name();
    r.verdict =
        compare(c, reference(c, compare_profile_.value_or(ex->profile())), r.outcome, level_);
    r.verdict.executor = ex->name();
    if (baseline_) {
      for (const KnownDivergence* d : baseline_->entries(c.name, ex->name()))
        r.known.push_back(d->signature);
    }
    report.results.push_back(std::move(r));
  }
  return report;
}

}  // namespace collfuzz
