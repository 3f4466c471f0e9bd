#include "harness/campaign/finding_report.h"

#include "harness/core/build_info.h"
#include "harness/core/case_json.h"
#include "harness/core/outcome_json.h"

namespace collfuzz::campaign {

nlohmann::json size_json(const CaseSize& s) {
  return {{"ops", s.ops}, {"ctas", s.ctas}, {"elements", s.elements}};
}

nlohmann::json finding_report(const std::string& signature, const FoundAt& at,
                              const CaseReportFull& report, const CaseSize& original,
                              const CaseSize& current, bool shrunk,
                              const ShrinkStats* shrink_stats) {
  nlohmann::json j;
  j["signature"] = signature;
  j["group"] = report.group_of(signature);  // the root cause (root_cause.h)
  j["collfuzz"] = {{"version", collfuzz_version()}, {"commit", collfuzz_commit()}};
  j["found"] = {{"case", at.case_name},
                {"seed", at.seed},
                {"index", at.index},
                {"worker", at.worker},
                {"seconds", at.seconds},
                {"reproduce", "collfuzz gen --seed " + std::to_string(at.seed) + " --first " +
                                  std::to_string(at.index) + " --count 1"}};
  j["shrunk"] = shrunk;
  j["original_size"] = size_json(original);
  j["size"] = size_json(current);
  if (shrink_stats)
    j["shrink"] = {{"candidates", shrink_stats->candidates}, {"accepted", shrink_stats->accepted}};
  nlohmann::json mismatches = nlohmann::json::array();
  for (const auto& m : report.mismatches)
    mismatches.push_back({{"signature", m.signature}, {"detail", m.detail}});
  j["mismatches"] = mismatches;
  nlohmann::json reference = nlohmann::json::object();
  for (const auto& [p, o] : report.reference) reference[to_string(p)] = outcome_to_json(o);
  j["reference"] = reference;
  nlohmann::json executors = nlohmann::json::array();
  for (const auto& e : report.executors) {
    nlohmann::json ms = nlohmann::json::array();
    for (const auto& m : e.verdict.mismatches)
      ms.push_back({{"signature", m.signature}, {"detail", m.detail}});
    executors.push_back(
        {{"executor", e.executor},
         {"outcome", outcome_to_json(e.outcome)},
         {"verdict",
          {{"ran", e.verdict.ran}, {"agrees", e.verdict.agrees()}, {"mismatches", ms}}}});
  }
  j["executors"] = executors;
  return j;
}

}  // namespace collfuzz::campaign
