// collfuzz_shard_mutant: the campaign's workers (harness/campaign/worker.cpp) run one shard of a
// seed's stream against a simulator with a planted bug, so that the shard-union test has findings
// to compare. Prints one JSON object: the cases run, the rule coverage, each signature's
// occurrences and the global index each worker first found it on. Test-only (mutant build).
// With OUT, it also writes a campaign directory there as `collfuzz fuzz` does (findings as found,
// summary.json, summary.md, timeline.jsonl): the merge and report tests' input with findings.
// Usage: collfuzz_shard_mutant SEED MUTANT I/N CASES JOBS [OUT]
// With COLLFUZZ_KNOWN_BUGS=FILE, the workers match disagreements against that known-bugs list
// (known_jax_bugs.h) as `collfuzz fuzz --known-bugs` does: the known-bug test's seam.
#include <bit>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/campaign/campaign_summary.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/shard.h"
#include "harness/campaign/timeline.h"
#include "harness/campaign/worker.h"
#include "harness/executors/sim_executor.h"
#include "harness/lowering/mutants.h"
#include "harness/runner/known_jax_bugs.h"

int main(int argc, char** argv) {
  using namespace collfuzz;
  using namespace collfuzz::campaign;
  if (argc != 6 && argc != 7) {
    std::cerr << "usage: collfuzz_shard_mutant SEED MUTANT I/N CASES JOBS [OUT]\n";
    return 2;
  }
  const auto mutant = lowering::parse_mutant(argv[2]);
  if (!mutant) {
    std::cerr << "unknown mutant " << argv[2] << "\n";
    return 2;
  }
  lowering::set_active_mutant(*mutant);
  WorkerConfig config;
  config.seed = std::stoull(argv[1]);
  config.shard = parse_shard("shard", argv[3]);
  config.case_limit = std::stoll(argv[4]);
  config.jobs = std::stoll(argv[5]);
  config.shrink = false;
  std::optional<KnownJaxBugs> known_bugs;
  if (const char* f = std::getenv("COLLFUZZ_KNOWN_BUGS"); f && *f) {
    known_bugs = KnownJaxBugs::load(f);
    config.known_bugs = &*known_bugs;
  }
  std::int64_t cases = 0;
  generators::RuleCoverage coverage;
  std::map<std::string, std::int64_t> occurrences;
  nlohmann::json found = nlohmann::json::object();  // signature -> global indices first found on
  std::unique_ptr<CampaignDirectory> dir;
  std::unique_ptr<FindingsStore> store;
  std::unique_ptr<TimelineWriter> timeline;
  if (argc == 7) {
    dir = std::make_unique<CampaignDirectory>(argv[6]);
    std::filesystem::create_directories(dir->out() / "state");
    store = std::make_unique<FindingsStore>(dir->findings());
    timeline = std::make_unique<TimelineWriter>(
        dir->out() / "timeline.jsonl", std::vector<std::string>{"sim"}, config.shard, 0, 0, 0.0);
  }
  const auto started = std::chrono::steady_clock::now();
  ExecutorTally tallies[kMaxTalliedExecutors];  // the sim's, over every worker (per_executor)
  for (std::int64_t w = 0; w < config.jobs; ++w) {
    std::vector<std::unique_ptr<Executor>> executors;
    executors.push_back(std::make_unique<SimExecutor>());
    CaseCheck check(std::move(executors), DiagnosticLevel::kMessage);
    check.set_tallies(tallies);
    config.worker = w;
    Worker worker(config, check, store.get(), dir.get(), nullptr, nullptr);
    worker.on_finding = [&](const FindingEvent& ev) { found[ev.signature].push_back(ev.index); };
    WorkerState start;
    start.worker = w;
    start.next_index = static_cast<std::uint64_t>(w);
    const WorkerState end = worker.run(start);
    cases += end.cases;
    coverage.merge(end.coverage);
    for (const auto& [sig, n] : end.signatures) occurrences[sig] += n;
    if (timeline) {
      ProgressSnapshot snap;
      snap.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      snap.cases = cases;
      snap.rules_hit = coverage.rules_hit();
      snap.rules_total = coverage.rules_reachable();
      snap.executors.push_back(
          {"sim", tallies[0].compared.load(),
           static_cast<std::size_t>(std::popcount(tallies[0].rules_lo.load()) +
                                    std::popcount(tallies[0].rules_hi.load()))});
      timeline->record(snap, true);
    }
  }
  if (dir) {
    CampaignOptions o;
    o.seed = config.seed;
    o.cases = config.case_limit;
    o.executors = {"sim"};
    o.jobs = config.jobs;
    o.shard = config.shard;
    o.shrink = false;
    dir->save_options(o);
    CampaignTotals totals = merge_worker_states(*dir, config.jobs);
    totals.run_cases = totals.cases;
    totals.run_seconds = totals.seconds;
    write_summary(*dir, o, totals, store->load_all());
  }
  const nlohmann::json cov = coverage.to_json();
  std::cout << nlohmann::json{{"cases", cases},
                              {"rules", cov["rules"]},
                              {"outcome_kinds", cov["outcome_kinds"]},
                              {"occurrences", occurrences},
                              {"found", found}}
                   .dump()
            << "\n";
  return 0;
}
