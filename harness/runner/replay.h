// `collfuzz replay`: every case file under the given paths, on every executor; one check per case
// and executor, each passed, failed or skipped (an executor that did not run the case).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/runner/case_runner.h"

namespace collfuzz {

struct CheckResult {
  enum class Status : std::uint8_t { kPass, kFail, kSkip };
  std::string file;
  std::string case_name;
  std::string executor;
  Status status = Status::kPass;
  std::string message;    // failure or skip reason
  std::string signature;  // first failing signature
  double seconds = 0;
  std::vector<std::string> signatures;  // every unexpected signature (and stale baseline entries)
  std::string jax_version;  // the JAX release the executor runs (its hello), if it has one
  std::string judged_jax;   // the release whose reference judged it
  // Empty for the replay's own comparison; "mosaic" (the profile) for the second comparison of
  // --also-compare-profile (CaseReport::also).
  std::string also_profile;
};

struct ReplaySummary {
  std::vector<CheckResult> checks;
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  bool bad_input = false;
  // Each executor's versions as its outcomes report them ("jax 0.12.0.1, jaxlib 0.12.0.1").
  std::map<std::string, std::string> executor_versions;
  CheckCounts counts;  // of the cases that could be read (their executors, for "nothing compared")
  // The second comparison's checks (--also-compare-profile), counted apart.
  std::vector<CheckResult> also_checks;
  int also_passed = 0;
  int also_failed = 0;
  int also_skipped = 0;
  // The second comparison as a summary of its own (for its JUnit file and closing line).
  ReplaySummary also_summary() const;
};

// Whether a file found in a directory is a case file: named *.json, not hidden (.*), and not a
// finding's outcomes (*.outcomes.json) or its script's result (*.reproduced.json), so that
// `collfuzz replay OUT/findings` replays the findings. A file named on the command line is always
// read as a case.
bool is_case_file_name(const std::filesystem::path& file);

// Case files under `paths` (files as given; directories searched recursively for case files,
// each directory's sorted). Throws InputError for a path that does not exist, a directory that
// (or an entry of which) cannot be read, and a directory that holds no case file.
std::vector<std::filesystem::path> collect_case_files(const std::vector<std::string>& paths);

// Classifies one case report into checks (appended to `summary`).
void classify(const CaseReport& report, ReplaySummary& summary);

ReplaySummary replay(const std::vector<std::filesystem::path>& files, CaseRunner& runner,
                     const std::function<void(const CheckResult&)>& on_check);

// The same with `runners.size()` cases at once, each runner (and its executors: a JAX worker
// process each) on its own thread. The summary, and the order of `on_check` calls, are those of
// the sequential replay: checks are reported in file order, each file as soon as it and every file
// before it are done.
ReplaySummary replay_parallel(const std::vector<std::filesystem::path>& files,
                              const std::vector<CaseRunner*>& runners,
                              const std::function<void(const CheckResult&)>& on_check);

void write_junit(const ReplaySummary& summary, const std::filesystem::path& file);
// "jax 0.12.0.1, jaxlib 0.12.0.1" from an executor outcome's info; empty without versions.
std::string executor_versions(const Outcome& o);

// The closing line: "N passed, N failed" (", N skipped" when any were skipped).
std::string summary_line(const ReplaySummary& summary);

// One line per executor that marked cases unavailable (version mismatches aside): each reason
// (for jax-ir, the op or PTX string it does not model) with how many cases gave it, most first.
std::vector<std::string> unavailable_lines(const ReplaySummary& summary);

}  // namespace collfuzz
