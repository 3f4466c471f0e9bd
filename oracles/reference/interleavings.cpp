// The run-time errors of other interleavings (interleavings.h): the same execution under other
// schedules, each run until its first error.
#include "oracles/reference/interleavings.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "harness/core/limits.h"
#include "oracles/reference/checker.h"
#include "oracles/reference/execution.h"
#include "oracles/reference/execution_model.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/undefined_runs.h"

namespace collfuzz::ref {
namespace {

bool interleaving_dependent(const Diagnostic& d) {
  return d.stage == to_string(Stage::kRun) &&
         (d.rule.rfind("run.barrier.", 0) == 0 || d.rule == "interpret.cluster_ref.unsupported");
}

// Whether some CTA's threads reach another CTA: they arrive on its barriers (interpret mode's
// ClusterBarrier; a copy arrives on its own CTA's barrier there, whatever its collective axes),
// or name it through plgpu.cluster_ref, whose refusal carries the index the CTA computed, so that
// the CTAs' errors differ by more than the CTA's name.
bool ctas_interact(const Case& c) {
  bool shared = false;
  walk_program(c.program, [&](const Op& op, const Scope&) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const Alloc& a : rs->allocs) shared = shared || a.kind == AllocKind::kClusterBarrier;
    }
    const auto peer = [&](const VectorValue& v) {
      for_each_vector_load(
          v, [&](const VectorValue& l) { shared = shared || !l.cluster_axis.empty(); });
    };
    if (const auto* vs = std::get_if<VectorStore>(&op.v)) {
      shared = shared || !vs->cluster_axis.empty();
      peer(vs->value);
    }
    if (const auto* l = std::get_if<Loop>(&op.v); l && l->carry) {
      peer(l->carry->init);
      peer(l->carry->next);
    }
  });
  return shared;
}

// What decides the steps CTA `rank`'s threads take: every `when` condition's value for each of
// its threads (loops have static trip counts). CTAs with the same key run the same steps.
std::string cta_steps_key(const Case& c, const MeshFacts& mesh, std::int64_t rank) {
  std::string key;
  walk_program(c.program, [&](const Op& op, const Scope&) {
    if (const auto* w = std::get_if<When>(&op.v)) {
      for (std::int64_t t = 0; t < mesh.num_threads(); ++t)
        key += exec::eval_cond(w->cond, mesh, rank, t) ? '1' : '0';
    }
  });
  return key;
}

// `s` with every thread of CTA `from` named as the same thread of CTA `to`.
std::string rename_cta(std::string s, std::int64_t from, std::int64_t to, std::int64_t threads) {
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::string a = interpret_thread_repr(from, t);
    const std::string b = interpret_thread_repr(to, t);
    for (std::size_t at = s.find(a); at != std::string::npos; at = s.find(a, at + b.size()))
      s.replace(at, a.size(), b);
  }
  return s;
}

// Whether a schedule's execution completed: with every CTA, a completed outcome; with one CTA
// alone (the others never start, so the whole run reads as a deadlock), every wait of that CTA
// completed.
bool ran_to_the_end(const Outcome& o, std::optional<std::int64_t> rank) {
  if (o.kind == OutcomeKind::kCompleted) return true;
  if (!rank || o.kind != OutcomeKind::kDeadlock) return false;
  for (const CtaRecord& cta : o.ctas) {
    if (cta.rank != *rank) continue;
    for (const WaitRecord& w : cta.waits)
      if (!w.completed) return false;
    return true;
  }
  return false;
}

class Explorer {
 public:
  Explorer(const Case& c, Profile profile, const InterleavingBudget& budget)
      : c_(c), profile_(profile), budget_(budget) {}

  // The errors the schedules of one unit (one CTA, or every thread) raise first, up to `runs`
  // executions.
  std::vector<Diagnostic> explore(std::optional<std::int64_t> rank, std::size_t runs,
                                  bool& completed) {
    std::vector<Diagnostic> found;
    std::set<std::pair<std::string, std::string>> seen;
    std::size_t done = 0;
    std::vector<std::size_t> steps;
    auto run = [&](Schedule s) {
      if (done >= runs) return false;
      ++done;
      s.only_rank = rank;
      const bool first = steps.empty();
      Checker ck(c_, profile_, nullptr);
      try {
        if (ran_to_the_end(execute(ck, s, first ? &steps : nullptr), rank)) completed = true;
      } catch (const Rejected& r) {
        const Diagnostic& d = r.diagnostic;
        if (d.stage == to_string(Stage::kRun) && seen.emplace(d.rule, d.message).second)
          found.push_back(d);
      } catch (const UndefinedRun&) {
        // Undefined behaviour before any error: this schedule raises none.
      }
      return true;
    };
    // The round-robin from each thread (the first run also counts every thread's steps).
    run(Schedule{});
    const std::size_t n = steps.size();
    for (std::size_t r = 1; r < n; ++r) run(Schedule{.rotate = r});
    for (std::size_t k = 0; k < budget_.random_schedules; ++k)
      run(Schedule{.random_seed = 0x9e3779b97f4a7c15ULL * (k + 1)});
    // The round-robin with one preemption: thread u stops after its step k.
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t u = 0; u < n; ++u) {
        for (std::size_t k = 1; k < steps[u]; ++k) {
          if (!run(Schedule{.rotate = r, .preempt = std::make_pair(u, k)})) return found;
        }
      }
    }
    return found;
  }

 private:
  const Case& c_;
  const Profile profile_;
  const InterleavingBudget& budget_;
};

}  // namespace

std::vector<DiagnosticAlternative> interleaving_alternatives(const Case& c, Profile profile,
                                                             const Diagnostic& canonical,
                                                             const InterleavingBudget& budget,
                                                             bool* may_complete) {
  if (may_complete) *may_complete = false;
  if (profile != Profile::kInterpret || canonical.stage != to_string(Stage::kRun)) return {};
  const MeshFacts mesh(c);
  // Any other run-time error (a reducing store's refusal, say) is the same on every CTA that
  // reaches it; but where the CTAs run different steps, another kind of CTA may fail first with
  // a barrier error of its own (found by a campaign of 2026-12-07: CTA 0 reached its refusal in
  // the reference's schedule while the 7 CTAs that never wait broke a barrier earlier in JAX).
  if (!interleaving_dependent(canonical)) {
    std::set<std::string> kinds;
    for (std::int64_t r = 0; r < mesh.num_ctas(); ++r) kinds.insert(cta_steps_key(c, mesh, r));
    if (kinds.size() < 2) return {};
  }
  bool all_complete = true;
  Explorer explorer(c, profile, budget);
  std::vector<Diagnostic> found;
  if (ctas_interact(c)) {
    bool completed = false;
    found = explorer.explore(std::nullopt, budget.max_runs, completed);
    all_complete = completed;
  } else {
    // One CTA of each kind runs alone; the others of its kind raise the same errors as their own.
    std::map<std::string, std::vector<std::int64_t>> kinds;
    for (std::int64_t r = 0; r < mesh.num_ctas(); ++r)
      kinds[cta_steps_key(c, mesh, r)].push_back(r);
    const std::size_t runs = std::max<std::size_t>(budget.max_runs / kinds.size(), 1);
    for (const auto& [key, ranks] : kinds) {
      const std::int64_t first = ranks.front();
      bool completed = false;
      const std::vector<Diagnostic> errors = explorer.explore(first, runs, completed);
      all_complete = all_complete && completed;
      for (const Diagnostic& d : errors) {
        for (const std::int64_t r : ranks) {
          Diagnostic renamed = d;
          // Only the barrier rules' messages depend on nothing but the steps and the CTA's name.
          if (r != first && !interleaving_dependent(d)) continue;
          renamed.message = rename_cta(d.message, first, r, mesh.num_threads());
          found.push_back(std::move(renamed));
        }
      }
    }
  }
  if (may_complete) *may_complete = all_complete;
  std::vector<DiagnosticAlternative> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen{
      {canonical.rule, canonical.exception, canonical.message}};
  for (const Diagnostic& d : found) {
    if (!seen.emplace(d.rule, d.exception, d.message).second) continue;
    out.push_back(DiagnosticAlternative{d.rule, d.exception, d.message, d.op});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rule, a.message, a.op) < std::tie(b.rule, b.message, b.op);
  });
  if (out.size() > limits::kMaxDiagnosticAlternatives)
    out.resize(limits::kMaxDiagnosticAlternatives);
  return out;
}

}  // namespace collfuzz::ref
