#include "harness/campaign/bug_finding.h"

#include <chrono>
#include <memory>
#include <set>

#include "generators/case_stream.h"
#include "harness/campaign/case_check.h"
#include "harness/core/case_json.h"
#include "harness/executors/sim_executor.h"

namespace collfuzz::campaign {
namespace {

std::set<std::string> signatures(CaseCheck& check, const Case& c, lowering::Mutant m) {
  lowering::set_active_mutant(m);
  std::set<std::string> out;
  for (const auto& mm : check.mismatches(c)) out.insert(mm.signature);
  return out;
}

// A signature the mutant causes on `c`: there with the mutant, not without it.
std::string caused_by(CaseCheck& check, const Case& c, lowering::Mutant m) {
  const auto with = signatures(check, c, m);
  if (with.empty()) return {};
  const auto without = signatures(check, c, lowering::Mutant::kNone);
  lowering::set_active_mutant(m);
  for (const auto& s : with) {
    if (!without.count(s)) return s;
  }
  return {};
}

}  // namespace

std::size_t MutantGroups::group_count() const {
  std::set<std::string> distinct;
  for (const auto& [signature, group] : groups) distinct.insert(group);
  return distinct.size();
}

MutantGroups mutant_groups(lowering::Mutant mutant, std::uint64_t seed, double budget_seconds) {
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<SimExecutor>());
  CaseCheck check(std::move(executors), DiagnosticLevel::kMessage);
  MutantGroups g;
  g.mutant = std::string(lowering::mutant_name(mutant));
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(budget_seconds));
  for (std::uint64_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    const Case c = generators::generate_case(seed, i);
    ++g.cases;
    const auto with = signatures(check, c, mutant);
    if (with.empty()) continue;
    bool fresh = false;
    for (const auto& s : with) fresh = fresh || !g.groups.count(s);
    if (!fresh) continue;
    const auto without = signatures(check, c, lowering::Mutant::kNone);
    lowering::set_active_mutant(mutant);
    const CaseReportFull report = check.full(c);
    for (const auto& s : with) {
      if (!without.count(s) && !g.groups.count(s)) g.groups[s] = report.group_of(s);
    }
  }
  lowering::set_active_mutant(lowering::Mutant::kNone);
  return g;
}

MutantHunt hunt_mutant(lowering::Mutant mutant, std::uint64_t seed, double budget_seconds,
                       ShrinkLimits limits) {
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::make_unique<SimExecutor>());
  CaseCheck check(std::move(executors), DiagnosticLevel::kMessage);
  MutantHunt h;
  h.mutant = std::string(lowering::mutant_name(mutant));
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(budget_seconds));
  lowering::set_active_mutant(mutant);
  for (std::uint64_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    const Case c = generators::generate_case(seed, i);
    ++h.cases_to_detection;
    if (check.mismatches(c).empty()) continue;
    const std::string sig = caused_by(check, c, mutant);
    if (sig.empty()) continue;
    h.detected = true;
    h.seconds_to_detection =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    h.signature = sig;
    h.case_name = c.name;
    h.original = case_size(c);
    const auto t0 = std::chrono::steady_clock::now();
    CaseShrinker shrinker(
        [&](const Case& cand) {
          const auto with = signatures(check, cand, mutant);
          if (!with.count(sig)) return false;
          return !signatures(check, cand, lowering::Mutant::kNone).count(sig);
        },
        limits);
    const Case shrunk = shrinker.shrink(generators::generate_shrinkable(seed, i));
    lowering::set_active_mutant(lowering::Mutant::kNone);
    h.shrink_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    h.shrunk = case_size(shrunk);
    h.shrunk_case_json = case_to_json(shrunk).dump();
    return h;
  }
  lowering::set_active_mutant(lowering::Mutant::kNone);
  return h;
}

}  // namespace collfuzz::campaign
