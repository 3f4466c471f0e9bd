// collfuzz replay: regression-corpus replay, with JUnit for CI.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/core/build_info.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/baseline.h"
#include "harness/runner/baseline_lookup.h"
#include "harness/runner/replay.h"

namespace collfuzz::cli {

int cmd_replay(const Flags& flags, const std::vector<std::string>& paths) {
  std::vector<std::string> executors = {"reference"};
  if (!flags.executors.empty()) executors = parse_executor_list(flags.executors);
  Baseline baseline;
  const BaselineLocation baseline_at = find_known_divergences(flags.baseline);
  const std::string baseline_file = baseline_at.path;
  // Only the JAX executors have known divergences: say which baseline judged them, or warn.
  const bool judges_jax = std::any_of(executors.begin(), executors.end(),
                                      [](const auto& e) { return e.rfind("jax", 0) == 0; });
  if (judges_jax || !flags.baseline.empty())
    std::cout << baseline_location_line(baseline_at) << "\n";
  if (!baseline_file.empty()) baseline = Baseline::load(baseline_file);
  Baseline also_baseline;
  if (!flags.also_baseline.empty() || !flags.also_junit.empty()) {
    if (flags.also_compare_profile.empty())
      throw InputError(flags.also_baseline.empty() ? "--also-junit" : "--also-baseline",
                       "needs --also-compare-profile");
  }
  if (!flags.also_baseline.empty()) also_baseline = Baseline::load(flags.also_baseline);
  const auto files = collect_case_files(paths);
  // --jobs N: N runners, each with its own executors (JAX worker processes), never more than files.
  const auto jobs = static_cast<std::size_t>(
      std::clamp<std::int64_t>(flags.jobs, 1, std::max<std::int64_t>(1, std::ssize(files))));
  std::vector<std::unique_ptr<CaseRunner>> runners;
  std::vector<CaseRunner*> runner_ptrs;
  for (std::size_t j = 0; j < jobs; ++j) {
    auto& runner = runners.emplace_back(std::make_unique<CaseRunner>(
        executors, executor_options(flags), parse_level_flag(flags.level), &baseline));
    runner->pin_jax(parse_jax_flag(flags.jax));
    if (!flags.compare_profile.empty())
      runner->compare_against(parse_profile_flag(flags.compare_profile, Profile::kMosaic));
    if (!flags.also_compare_profile.empty()) {
      runner->also_compare_against(parse_profile_flag(flags.also_compare_profile, Profile::kMosaic),
                                   flags.also_baseline.empty() ? nullptr : &also_baseline);
    }
    runner_ptrs.push_back(runner.get());
  }
  const ReplaySummary summary = replay_parallel(files, runner_ptrs, [&](const CheckResult& c) {
    const std::string who =
        c.executor +
        (c.also_profile.empty() ? "" : " vs " + c.also_profile + " (second comparison)");
    if (c.status == CheckResult::Status::kFail) {
      std::cout << "FAIL " << terminal_text(c.file) << " [" << who
                << "]: " << terminal_lines(c.message) << "\n"
                << std::flush;
    } else if (flags.verbose) {
      std::cout << (c.status == CheckResult::Status::kPass ? "PASS " : "SKIP ")
                << terminal_text(c.file) << " [" << who << "]"
                << (c.message.empty() ? "" : ": " + terminal_lines(c.message)) << "\n";
    }
  });
  if (!flags.junit.empty()) write_junit(summary, flags.junit);
  if (!flags.also_junit.empty()) write_junit(summary.also_summary(), flags.also_junit);
  if (!flags.json_out.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : summary.checks) {
      const char* status = c.status == CheckResult::Status::kPass   ? "pass"
                           : c.status == CheckResult::Status::kFail ? "fail"
                                                                    : "skip";
      j.push_back({{"file", c.file},
                   {"case", c.case_name},
                   {"executor", c.executor},
                   {"status", status},
                   {"message", c.message},
                   {"signature", c.signature},
                   {"signatures", c.signatures},
                   {"seconds", c.seconds},
                   {"collfuzz", collfuzz_version_line()},
                   {"jax_version", c.jax_version},
                   {"judged_jax", c.judged_jax}});
    }
    write_file_atomically(flags.json_out, j.dump(2) + "\n");
  }
  // Provenance and the notes first: the summary line stays the last line (CI reads it).
  std::cout << collfuzz_version_line() << "\n";
  for (const auto& [executor, versions] : summary.executor_versions)
    std::cout << terminal_text(executor) << ": " << terminal_text(versions) << "\n";
  const bool nothing_compared =
      !summary.bad_input && summary.failed == 0 && summary.counts.nothing_compared();
  if (nothing_compared) {
    std::cout << "collfuzz replay: " << summary.counts.nothing_compared_message() << "\n";
  } else {
    for (const auto& [executor, why] : summary.counts.never_ran())
      std::cout << "note: " << executor << " ran no case: " << terminal_text(why) << "\n";
  }
  for (const std::string& line : unavailable_lines(summary))
    std::cout << terminal_text(line) << "\n";
  if (!flags.also_compare_profile.empty()) {
    std::cout << "second comparison (executors against the " << flags.also_compare_profile
              << " profile's prediction): " << summary_line(summary.also_summary()) << "\n";
  }
  std::cout << summary_line(summary) << "\n";
  if (summary.bad_input) return kExitBadInput;
  if (summary.failed || summary.also_failed) return kExitMismatch;
  if (nothing_compared && !flags.allow_unavailable) return kExitMismatch;
  return kExitOk;
}

}  // namespace collfuzz::cli
