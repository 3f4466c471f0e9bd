// collfuzz run: each case's predicted outcome, and each executor's outcome with the oracles'
// verdict.
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/runner/case_runner.h"
#include "harness/runner/outcome_text.h"
#include "oracles/reference/reference.h"

namespace collfuzz::cli {

int cmd_run(const Flags& flags, const std::vector<std::string>& cases) {
  std::vector<std::string> executors = {"reference"};
  if (!flags.executors.empty()) executors = parse_executor_list(flags.executors);
  CaseRunner runner(executors, executor_options(flags), parse_level_flag(flags.level));
  if (!flags.compare_profile.empty())
    runner.compare_against(parse_profile_flag(flags.compare_profile, Profile::kMosaic));
  bool any_mismatch = false;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& file : cases) {
    nlohmann::json expect;
    const Case c = load_case_file(file, &expect);
    const Profile profile = parse_profile_flag(flags.profile, c.target.profile);
    const Outcome predicted = predict(c, profile).outcome;
    CaseReport report = runner.run(c, &expect, file);
    if (flags.json) {
      nlohmann::json j{{"case", c.name}, {"file", file}, {"reference", outcome_to_json(predicted)}};
      nlohmann::json ex = nlohmann::json::array();
      for (const auto& r : report.results) {
        nlohmann::json vj{
            {"executor", r.executor}, {"ran", r.verdict.ran}, {"agrees", r.verdict.agrees()}};
        nlohmann::json ms = nlohmann::json::array();
        for (const auto& m : r.verdict.mismatches)
          ms.push_back({{"signature", m.signature}, {"detail", m.detail}});
        vj["mismatches"] = ms;
        vj["outcome"] = outcome_to_json(r.outcome);
        ex.push_back(vj);
      }
      j["executors"] = ex;
      all.push_back(j);
    } else {
      std::cout << "== " << c.name << " (" << file << ")\n" << describe_outcome(predicted);
      for (const auto& r : report.results)
        std::cout << describe_outcome(r.outcome) << describe_verdict(r.verdict);
    }
    if (report.stored && !report.stored->agrees()) {
      any_mismatch = true;
      if (!flags.json) std::cout << "stored expectation: " << describe_verdict(*report.stored);
    }
    for (const auto& r : report.results)
      any_mismatch = any_mismatch || (r.verdict.ran && !r.verdict.agrees());
  }
  if (flags.json) std::cout << all.dump(2) << "\n";
  return any_mismatch ? kExitMismatch : kExitOk;
}

}  // namespace collfuzz::cli
