#include "harness/campaign/case_check.h"

#include <chrono>
#include <optional>

#include "harness/campaign/root_cause.h"
#include "harness/campaign/slow_sampling.h"
#include "harness/campaign/undefined_behaviour.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz::campaign {
namespace {

Mismatch exception_mismatch(const std::string& phase, const std::string& executor,
                            const std::string& what) {
  Mismatch m;
  m.oracle = "crash";
  m.kind = "exception";
  m.what = phase;
  m.detail = phase + " threw: " + what;
  m.signature = make_signature(m.oracle, m.kind, m.what, executor);
  return m;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string exception_signature(const std::string& phase, const std::string& executor) {
  return make_signature("crash", "exception", phase, executor);
}

CaseCheck::CaseCheck(std::vector<std::unique_ptr<Executor>> executors, DiagnosticLevel level)
    : executors_(std::move(executors)), level_(level) {}

std::vector<std::string> CaseCheck::executor_names() const {
  std::vector<std::string> out;
  for (const auto& e : executors_) out.push_back(e->name());
  return out;
}

std::string CaseCheck::phase_name(std::uint32_t phase) const {
  switch (phase) {
    case kGenerate:
      return "generate";
    case kReference:
      return "reference";
    case kCompare:
      return "compare";
    case kShrink:
      return "shrink";
    default:
      break;
  }
  const std::uint32_t k = phase - kFirstExecutor;
  return k < executors_.size() ? executors_[k]->name() : "unknown";
}

namespace {
// An unpinned case as the executor's JAX release (its hello's jax_version) judges it, when that
// is a modelled release other than the case's (docs/rules.md, "JAX versions").
std::optional<Case> as_run_by(const Case& c, const Outcome& actual) {
  if (c.target.jax_pinned) return std::nullopt;
  const auto it = actual.info.find("jax_version");
  if (it == actual.info.end()) return std::nullopt;
  const auto v = parse_jax_version(it->second);
  if (!v || *v == c.target.jax) return std::nullopt;
  Case cv = c;
  cv.target.jax = *v;
  return cv;
}
// A case pinned to one release (fuzz --jax) run by an executor that announces another: a version
// mismatch, not compared (replay reports it the same way).
bool version_mismatch(const Case& c, const Outcome& actual) {
  if (!c.target.jax_pinned) return false;
  const auto it = actual.info.find("jax_version");
  if (it == actual.info.end() || it->second.empty() || it->second == "null") return false;
  const auto v = parse_jax_version(it->second);
  return !v || *v != c.target.jax;
}
}  // namespace

const Outcome& CaseCheck::prediction(const Case& c, Profile p, std::map<Profile, Outcome>& cache,
                                     std::vector<Mismatch>& out) {
  auto it = cache.find(p);
  if (it != cache.end()) return it->second;
  enter(kReference);
  Outcome o;
  try {
    o = predict(c, p).outcome;
  } catch (const std::exception& e) {
    out.push_back(exception_mismatch("reference", "reference", e.what()));
    o.kind = OutcomeKind::kCrash;
    o.profile = p;
    o.executor = "reference";
    o.reason = e.what();
  }
  return cache.emplace(p, std::move(o)).first->second;
}

void CaseCheck::tally(std::size_t k, const Outcome& expected) {
  if (!tallies_ || k >= kMaxTalliedExecutors) return;
  ExecutorTally& t = tallies_[k];
  t.compared.fetch_add(1, std::memory_order_relaxed);
  if (expected.kind != OutcomeKind::kRejected || !expected.diagnostic) return;
  if (const Rule* r = find_rule(expected.diagnostic->rule)) {
    const auto bit = static_cast<std::size_t>(r->id);
    (bit < 64 ? t.rules_lo : t.rules_hi)
        .fetch_or(std::uint64_t{1} << (bit % 64), std::memory_order_relaxed);
  }
}

std::vector<Mismatch> CaseCheck::mismatches(const Case& c, generators::RuleCoverage* coverage,
                                            std::optional<std::uint64_t> index,
                                            const std::string* only, bool stream) {
  std::vector<Mismatch> out;
  std::map<Profile, Outcome> cache;
  if (executors_.empty()) {
    // Only the reference runs: it is still exercised (a crash is a finding), for the case's
    // profile.
    const Outcome& own = prediction(c, c.target.profile, cache, out);
    if (coverage && own.kind != OutcomeKind::kCrash) coverage->record(c.target.profile, own);
  }
  for (std::size_t k = 0; k < executors_.size(); ++k) {
    Executor& ex = *executors_[k];
    if (only && ex.name() != *only) continue;
    if (index && !sampled_case(*index, sampling_salt(ex.name()), ex.sample_every())) continue;
    const Profile p = ex.profile();
    const bool fresh = cache.find(p) == cache.end();
    const Outcome& expected = prediction(c, p, cache, out);
    if (expected.kind == OutcomeKind::kCrash) continue;
    if (coverage && fresh) coverage->record(p, expected);
    enter(kFirstExecutor + static_cast<std::uint32_t>(k));
    Outcome actual;
    const auto t0 = std::chrono::steady_clock::now();
    if (observer_) observer_(k, nullptr, 0);
    try {
      actual = ex.run(c);
    } catch (const std::exception& e) {
      out.push_back(exception_mismatch(ex.name(), ex.name(), e.what()));
      if (observer_) {
        actual.kind = OutcomeKind::kCrash;
        actual.reason = e.what();
        observer_(k, &actual, seconds_since(t0));
      }
      continue;
    }
    if (observer_) observer_(k, &actual, seconds_since(t0));
    actual.executor = ex.name();
    if (version_mismatch(c, actual)) continue;
    if (index) ++runs_[ex.name()];  // a stream case: not a shrink candidate or a rerun
    if (actual.kind == OutcomeKind::kUnavailable) {
      if (index) ++unavailable_[ex.name() + ": " + unavailable_reason_class(actual.reason)];
      continue;
    }
    enter(kCompare);
    try {
      const std::optional<Case> judged = as_run_by(c, actual);
      const Outcome own = judged ? predict(*judged, p).outcome : Outcome{};
      Verdict v = compare(judged ? *judged : c, judged ? own : expected, actual, level_);
      if (!v.ran) {
        // Not compared (the reference predicts undefined behaviour, the run was defined):
        // counted with the unavailable runs, never as compared.
        if (index) ++unavailable_[ex.name() + ": " + unavailable_reason_class(v.reason)];
        continue;
      }
      if (index || stream) tally(k, expected);
      for (auto& m : v.mismatches) {
        m.signature = make_signature(m.oracle, m.kind, m.what, ex.name());
        out.push_back(std::move(m));
      }
    } catch (const std::exception& e) {
      out.push_back(exception_mismatch("compare", ex.name(), e.what()));
    }
  }
  return out;
}

std::string CaseReportFull::group_of(const std::string& signature) const {
  const auto it = groups.find(signature);
  return it == groups.end() ? signature : it->second;
}

CaseReportFull CaseCheck::full(const Case& c) {
  CaseReportFull r;
  if (executors_.empty()) prediction(c, c.target.profile, r.reference, r.mismatches);
  for (auto& exp : executors_) {
    ExecutorReport er;
    er.executor = exp->name();
    const Outcome& expected = prediction(c, exp->profile(), r.reference, r.mismatches);
    try {
      er.outcome = exp->run(c);
    } catch (const std::exception& e) {
      er.outcome.kind = OutcomeKind::kCrash;
      er.outcome.reason = std::string("exception: ") + e.what();
      r.mismatches.push_back(exception_mismatch(exp->name(), exp->name(), e.what()));
    }
    er.outcome.executor = exp->name();
    er.verdict.executor = exp->name();
    const bool other_release = version_mismatch(c, er.outcome);
    if (other_release) {
      er.verdict.ran = false;
      er.verdict.reason = "version mismatch: the case is pinned to JAX " +
                          std::string(to_string(c.target.jax)) + ", the executor runs JAX " +
                          er.outcome.info.at("jax_version");
    }
    if (!other_release && expected.kind != OutcomeKind::kCrash &&
        er.outcome.kind != OutcomeKind::kCrash) {
      try {
        const std::optional<Case> judged = as_run_by(c, er.outcome);
        const Outcome own = judged ? predict(*judged, exp->profile()).outcome : Outcome{};
        er.verdict = compare(judged ? *judged : c, judged ? own : expected, er.outcome, level_);
        er.verdict.executor = exp->name();
        for (auto& m : er.verdict.mismatches)
          m.signature = make_signature(m.oracle, m.kind, m.what, exp->name());
        const std::string group = root_cause_group(er.verdict.mismatches, er.outcome, exp->name());
        for (const auto& m : er.verdict.mismatches) {
          r.groups.emplace(m.signature, group);
          r.mismatches.push_back(m);
        }
      } catch (const std::exception& e) {
        r.mismatches.push_back(exception_mismatch("compare", exp->name(), e.what()));
      }
    }
    r.executors.push_back(std::move(er));
  }
  return r;
}

}  // namespace collfuzz::campaign
