// The outcomes file of a finding: where it was found, what was shrunk, the reference's
// predictions, every executor's outcome and the oracles' verdicts on them.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/campaign/case_check.h"
#include "harness/campaign/case_shrinker.h"

namespace collfuzz::campaign {

struct FoundAt {
  std::string case_name;
  std::uint64_t seed = 0;
  std::uint64_t index = 0;
  std::int64_t worker = 0;
  double seconds = 0;  // into the worker's run
};

nlohmann::json size_json(const CaseSize& s);

nlohmann::json finding_report(const std::string& signature, const FoundAt& at,
                              const CaseReportFull& report, const CaseSize& original,
                              const CaseSize& current, bool shrunk,
                              const ShrinkStats* shrink_stats);

}  // namespace collfuzz::campaign
