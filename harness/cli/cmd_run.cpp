// collfuzz run: each case's predicted outcome, and each executor's outcome with the oracles'
// verdict.
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/cli/stdin_case.h"
#include "harness/core/build_info.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/case_runner.h"
#include "harness/runner/outcome_text.h"
#include "harness/runner/profile_acceptance.h"
#include "harness/runner/replay.h"
#include "oracles/reference/reference.h"

namespace collfuzz::cli {

int cmd_run(const Flags& flags, const std::vector<std::string>& cases) {
  std::vector<std::string> executors = {"reference"};
  if (!flags.executors.empty()) executors = parse_executor_list(flags.executors);
  CaseRunner runner(executors, executor_options(flags), parse_level_flag(flags.level));
  const std::optional<JaxVersion> jax = parse_jax_flag(flags.jax);
  runner.pin_jax(jax);
  if (!flags.compare_profile.empty())
    runner.compare_against(parse_profile_flag(flags.compare_profile, Profile::kMosaic));
  bool any_mismatch = false;
  // Checks made (an executor's verdict, or the stored expectation) and executors that did not run.
  CheckCounts counts;
  nlohmann::json all = nlohmann::json::array();
  bool stdin_read = false;
  for (const auto& file : cases) {
    nlohmann::json expect;
    Case c;
    if (file == "-") {
      if (stdin_read) throw InputError("-", "standard input can be read once");
      stdin_read = true;
      c = load_case_from_stdin(&expect);
    } else {
      c = load_case_file(file, &expect);
    }
    const std::string shown_file = file == "-" ? kStdinName : file;
    const Profile profile = parse_profile_flag(flags.profile, c.target.profile);
    const Case judged = with_jax_flag(c, jax);
    Outcome predicted = predict(judged, profile).outcome;
    // Shown with the errors other interleavings raise instead (docs/outcome-format.md).
    add_interleaving_alternatives(judged, predicted);
    const std::vector<ProfileAcceptance> profiles = predict_each_profile(judged);
    CaseReport report = runner.run(c, &expect, shown_file);
    counts.add(report);
    if (flags.json) {
      nlohmann::json j{{"case", c.name},
                       {"file", shown_file},
                       {"collfuzz", collfuzz_version_line()},
                       {"jax", to_string(judged.target.jax)},
                       {"reference", outcome_to_json(predicted)},
                       {"profiles", profiles_to_json(profiles)}};
      nlohmann::json ex = nlohmann::json::array();
      for (const auto& r : report.results) {
        nlohmann::json vj{
            {"executor", r.executor}, {"ran", r.verdict.ran}, {"agrees", r.verdict.agrees()}};
        nlohmann::json ms = nlohmann::json::array();
        for (const auto& m : r.verdict.mismatches)
          ms.push_back({{"signature", m.signature}, {"detail", m.detail}});
        vj["mismatches"] = ms;
        vj["versions"] = executor_versions(r.outcome);
        vj["judged_jax"] = r.judged_jax;
        vj["version_mismatch"] = r.version_mismatch;
        if (!r.verdict.ran) vj["reason"] = r.verdict.reason;
        vj["outcome"] = outcome_to_json(r.outcome);
        ex.push_back(vj);
      }
      j["executors"] = ex;
      all.push_back(j);
    } else {
      std::cout << "== " << terminal_text(c.name) << " (" << terminal_text(shown_file) << "), JAX "
                << to_string(judged.target.jax) << ", " << collfuzz_version_line() << "\n"
                << "each profile, as the reference predicts:\n"
                << describe_profiles(profiles) << to_string(profile) << ": "
                << describe_outcome(predicted, &judged);
      for (const auto& r : report.results) {
        if (const std::string v = executor_versions(r.outcome); !v.empty())
          std::cout << terminal_text(r.executor) << " runs " << terminal_text(v)
                    << " (judged by JAX " << r.judged_jax << ")\n";
        std::cout << describe_outcome(r.outcome, &judged) << describe_verdict(r.verdict);
      }
    }
    if (report.stored && !report.stored->agrees()) {
      any_mismatch = true;
      if (!flags.json) std::cout << "stored expectation: " << describe_verdict(*report.stored);
    }
    for (const auto& r : report.results)
      any_mismatch = any_mismatch || (r.verdict.ran && !r.verdict.agrees());
  }
  if (flags.json) std::cout << all.dump(2) << "\n";
  // Only the reference asked for: `run` prints its predictions, and compares what is stored.
  const bool executors_requested = executors.size() > 1 || executors.front() != "reference";
  if (executors_requested && counts.nothing_compared()) {
    std::cerr << "collfuzz run: " << counts.nothing_compared_message() << "\n";
    if (!flags.allow_unavailable) return kExitMismatch;
  } else if (executors_requested) {
    for (const auto& [executor, why] : counts.never_ran()) {
      if (executor != "reference")
        std::cerr << "note: " << executor << " ran no case: " << terminal_text(why) << "\n";
    }
  }
  return any_mismatch ? kExitMismatch : kExitOk;
}

}  // namespace collfuzz::cli
