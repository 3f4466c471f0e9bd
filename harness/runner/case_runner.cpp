#include "harness/runner/case_runner.h"

#include <chrono>

#include "harness/core/message_regex.h"
#include "harness/core/outcome_json.h"
#include "harness/core/stage_names.h"
#include "harness/core/stored_expectation.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/baseline.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rules.h"

namespace collfuzz {

CheckCounts::Tally& CheckCounts::tally(const std::string& executor) {
  for (auto& [name, t] : executors_) {
    if (name == executor) return t;
  }
  return executors_.emplace_back(executor, Tally{}).second;
}

void CheckCounts::add(const CaseReport& report) {
  const auto count = [&](const Verdict& v, const std::string& executor) {
    Tally& t = tally(executor);
    if (!v.ran) {
      ++skipped_;
      t.reason = v.reason;
      return;
    }
    ++t.ran;
    ++(v.agrees() ? passed_ : failed_);
  };
  if (report.stored) {
    count(*report.stored, "reference");
  } else if (!report.stored_skip_reason.empty()) {
    ++skipped_;
    tally("reference").reason = report.stored_skip_reason;
  }
  for (const ExecutorResult& r : report.results) count(r.verdict, r.executor);
}

void CheckCounts::merge(const CheckCounts& other) {
  passed_ += other.passed_;
  failed_ += other.failed_;
  skipped_ += other.skipped_;
  for (const auto& [name, t] : other.executors_) {
    Tally& mine = tally(name);
    mine.ran += t.ran;
    if (!t.reason.empty()) mine.reason = t.reason;
  }
}

std::vector<std::pair<std::string, std::string>> CheckCounts::never_ran() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, t] : executors_) {
    if (t.ran == 0) out.emplace_back(name, t.reason);
  }
  return out;
}

std::string CheckCounts::nothing_compared_message() const {
  std::string m =
      "nothing was compared: every requested executor was unavailable for every case (" +
      std::to_string(passed_) + " passed, " + std::to_string(failed_) + " failed, " +
      std::to_string(skipped_) + " skipped (unavailable))";
  for (const auto& [name, why] : never_ran()) m += "; " + name + ": " + terminal_text(why);
  m += ". --allow-unavailable accepts this (for local use)";
  return m;
}

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
  const auto key = std::make_pair(profile, c.target.jax);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, predict(c, profile).outcome).first;
  return it->second;
}

void complete_stored_rule(Outcome& stored, const Outcome& predicted) {
  if (stored.kind != OutcomeKind::kRejected || !stored.diagnostic->rule.empty()) return;
  Diagnostic& d = *stored.diagnostic;
  if (!d.message_regex.empty()) {
    // assertRaisesRegex: the predicted rule, when the predicted exception is the stored one and
    // the regex occurs in the predicted message; else no rule (the check names the predicted one).
    if (predicted.kind == OutcomeKind::kRejected &&
        predicted.diagnostic->exception == d.exception &&
        message_regex_matches(d.message_regex, predicted.diagnostic->message)) {
      d.rule = predicted.diagnostic->rule;
    }
    return;
  }
  const std::string msg = normalize_message(d.message);
  if (predicted.kind == OutcomeKind::kRejected) {
    const Rule* r = find_rule(predicted.diagnostic->rule);
    if (r && rule_matches(*r, d.exception, msg)) {
      d.rule = r->name;
      return;
    }
  }
  if (msg.empty()) return;
  const std::string_view stage = is_stage_alias(d.stage) ? std::string_view{} : d.stage;
  if (const Rule* r = match_rule(d.exception, msg, stored.profile, stage)) d.rule = r->name;
}

namespace {

// The JAX release an executor's outcome says it ran (its hello's info.jax_version), if any.
const std::string* executor_jax(const Outcome& o) {
  auto it = o.info.find("jax_version");
  return it == o.info.end() || it->second.empty() || it->second == "null" ? nullptr : &it->second;
}
}  // namespace

Verdict CaseRunner::check_stored(const Case& c, const nlohmann::json& expect,
                                 const std::string& file) {
  // One stored outcome (for target.profile), or one per profile (stored_expectation.h): each is
  // held against the reference's prediction for its profile, in one verdict.
  Verdict out;
  out.executor = "reference";
  out.ran = true;
  const auto stored_list = stored_expectations(expect, c.target.profile, file + ":$.expect");
  for (const auto& [profile, j] : stored_list) {
    const std::string path =
        file + ":$.expect" +
        (is_profile_keyed(expect) ? std::string(".") + to_string(profile) : "");
    Outcome stored = outcome_from_json(*j, c, path);
    if (!j->contains("profile")) stored.profile = profile;
    stored.executor = "expect";
    const Outcome& predicted = reference(c, profile);
    complete_stored_rule(stored, predicted);
    Verdict v = compare(c, stored, predicted, level_);
    undefined_where_oracle(stored, predicted, v);
    for (auto& m : v.mismatches) {
      m.signature = make_signature(m.oracle, m.kind, m.what, "reference");
      if (stored_list.size() > 1) m.detail = std::string(to_string(profile)) + ": " + m.detail;
      out.mismatches.push_back(std::move(m));
    }
    out.compared += v.compared;
    out.unobserved += v.unobserved;
  }
  return out;
}

namespace {

// The signatures `baseline` lists as expected divergences of `executor` on `case_name`.
std::vector<std::string> known_signatures(const Baseline* baseline, const std::string& case_name,
                                          const std::string& executor) {
  std::vector<std::string> known;
  if (!baseline) return known;
  for (const KnownDivergence* d : baseline->entries(case_name, executor))
    known.push_back(d->signature);
  return known;
}

// The second comparison's result for the run `r` (CaseReport::also): its verdict and known list,
// the run's executor, time and JAX releases; the outcome stays in `r`.
ExecutorResult also_result(const ExecutorResult& r, Verdict verdict,
                           std::vector<std::string> known) {
  ExecutorResult a;
  a.executor = r.executor;
  a.seconds = r.seconds;
  a.jax_version = r.jax_version;
  a.judged_jax = r.judged_jax;
  a.verdict = std::move(verdict);
  a.known = std::move(known);
  return a;
}

}  // namespace

CaseReport CaseRunner::run(const Case& original, const nlohmann::json* expect,
                           const std::string& file) {
  cached_case_ = nullptr;
  // --jax: the case is judged by that release; its stored outcome, when pinned to another
  // release, says nothing about this one.
  Case pinned;
  const Case* judged = &original;
  std::string expect_skip;
  if (jax_override_ && (!original.target.jax_pinned || original.target.jax != *jax_override_)) {
    if (original.target.jax_pinned) {
      expect_skip = std::string("the stored outcome is for JAX ") + to_string(original.target.jax) +
                    ", the run is for JAX " + to_string(*jax_override_);
    }
    pinned = original;
    pinned.target.jax = *jax_override_;
    pinned.target.jax_pinned = true;
    judged = &pinned;
  }
  const Case& c = *judged;
  CaseReport report;
  report.file = file;
  report.name = c.name;
  report.reference = reference(c, c.target.profile);
  if (also_profile_) report.also_profile = to_string(*also_profile_);
  if (check_reference_) {
    if (!expect_skip.empty()) {
      report.stored_skip_reason = expect_skip;
    } else if (expect && !expect->is_null()) {
      report.stored = check_stored(c, *expect, file);
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
    // The executor's JAX release picks the reference it is held against; a case pinned to
    // another release is a version mismatch, not a divergence.
    Case as_run;
    const Case* against = &c;
    if (const std::string* v = executor_jax(r.outcome)) {
      r.jax_version = *v;
      const auto ev = parse_jax_version(*v);
      if (!ev) {
        r.version_mismatch = true;
        r.verdict.reason = "version mismatch: the executor runs JAX " + *v +
                           ", which collfuzz does not model (" + known_jax_versions_list() + ")";
      } else if (c.target.jax_pinned && *ev != c.target.jax) {
        r.version_mismatch = true;
        r.verdict.reason = std::string("version mismatch: the case is pinned to JAX ") +
                           to_string(c.target.jax) + ", the executor runs JAX " + *v;
      } else if (*ev != c.target.jax) {
        as_run = c;
        as_run.target.jax = *ev;
        against = &as_run;
      }
    }
    r.judged_jax = to_string(against->target.jax);
    const bool also = also_profile_ && *also_profile_ != compare_profile_.value_or(ex->profile());
    if (r.version_mismatch) {
      r.verdict.executor = ex->name();
      r.verdict.ran = false;
      if (also) report.also.push_back(also_result(r, r.verdict, {}));
      report.results.push_back(std::move(r));
      continue;
    }
    r.verdict = compare(*against, reference(*against, compare_profile_.value_or(ex->profile())),
                        r.outcome, level_);
    r.verdict.executor = ex->name();
    r.known = known_signatures(baseline_, c.name, ex->name());
    if (also) {
      Verdict v = compare(*against, reference(*against, *also_profile_), r.outcome, level_);
      v.executor = ex->name();
      report.also.push_back(
          also_result(r, std::move(v), known_signatures(also_baseline_, c.name, ex->name())));
    }
    report.results.push_back(std::move(r));
  }
  return report;
}

}  // namespace collfuzz
