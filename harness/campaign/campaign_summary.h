// The end of a campaign: summary.json and summary.md in the campaign directory, with the cases
// run, cases per second, rule coverage, outcome kinds, and the findings by signature with their
// case files.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generators/rule_coverage.h"
#include "harness/campaign/campaign_options.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/findings_store.h"
#include "harness/campaign/progress_display.h"

namespace collfuzz::campaign {

// Health checks: an executor or a profile that saw fewer cases than this is warned about.
inline constexpr std::int64_t kHealthMinCases = 100;

struct CampaignTotals {
  std::int64_t cases = 0;      // over every run of the campaign
  double seconds = 0;          // wall time over every run (the longest-running worker's)
  std::int64_t run_cases = 0;  // in this run
  double run_seconds = 0;
  std::int64_t worker_crashes = 0;
  generators::RuleCoverage coverage;
  std::map<std::string, std::int64_t> signatures;   // occurrences
  std::map<std::string, std::int64_t> unavailable;  // the fast workers' unavailable runs by reason
  std::map<std::string, std::int64_t> runs;         // the fast workers' runs per executor
  // Written once, with the rest of the summary:
  nlohmann::json flaky =
      nlohmann::json::array();  // load_flaky(): disagreements that are not findings
  nlohmann::json slow_pool;     // write_slow_pool_report()'s; null: no pool
  std::map<std::string, Profile> slow_profiles;  // each slow executor's profile
  // Per slow executor, the stages whose diagnostics it never reports (Executor::observes_stage):
  // the rules of those stages are out of its reach.
  std::map<std::string, std::set<std::string>> unobserved_stages;
  std::vector<FindingRecord> known;  // <out>/known: divergences the baseline lists
  // Per executor, in this run: the workers' tallies summed (executor_tally.h), the record that
  // timeline.jsonl's per_executor is written from. The health checks read the rules that reached
  // each real executor from it.
  std::vector<ProgressSnapshot::ExecutorProgress> executor_tallies;
};

// Merges the saved state of every worker.
CampaignTotals merge_worker_states(const CampaignDirectory& dir, std::int64_t jobs);

nlohmann::json summary_json(const CampaignOptions& o, const CampaignTotals& t,
                            const std::vector<FindingRecord>& f);
std::string summary_markdown(const nlohmann::json& summary);

// The root-cause groups of a summary's findings (each finding's "group", or its signature):
// per group, its signatures, their occurrences, and its smallest case.
nlohmann::json finding_groups(const nlohmann::json& findings);

// Sets a summary's finding entry's `reproduced` and `reproduced_why` from its
// SIGNATURE.reproduced.json (finding_repro_run.h); null: "not run". Shared by the campaign's
// summary and `collfuzz merge`.
void set_reproduced(nlohmann::json& entry, const nlohmann::json& reproduced);

// Writes both files atomically; returns the summary.
nlohmann::json write_summary(const CampaignDirectory& dir, const CampaignOptions& o,
                             const CampaignTotals& t, const std::vector<FindingRecord>& findings);

}  // namespace collfuzz::campaign
