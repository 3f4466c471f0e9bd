// Every finding's script is run once, as it is written, by the campaign itself (issue 27;
// docs/fuzzing.md "Does the script reproduce it?"): `PYTHON SIGNATURE.py` in a child process
// (process::ChildProcess), one at a time, with the campaign's JAX Python. The result is
// SIGNATURE.reproduced.json beside the finding, which the summary reads:
//
//   {"reproduced": "yes" | "no" | "error" | "skipped" | "not run", "why": "...", "mode": "...",
//    "seconds": S, "script": "fnv1a64:..."}
//
// yes: the script failed its assertion (JAX does not do what collfuzz's reference predicts);
// no: it passed (JAX agrees with the reference); error: it raised something else or gave no
// answer in kScriptSeconds; skipped: no script was written (SIGNATURE.repro.txt says why);
// not run: no time was left in the campaign's budget (or it was interrupted).
//
// Off the hot path: the supervisor polls the runner between its checks of the workers (a scan of
// the findings folder at most once a second, a non-blocking wait on the script), so the fast loop
// never waits for a script; a script runs beside the workers as one more process. During the
// campaign only findings whose shrinking is over are run (their script is final); at the end the
// rest, until the budget's end plus kGraceSeconds. A script whose text changed since its result
// (the finding was rewritten) is run again.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/process/child_process.h"

namespace collfuzz::campaign {

class FindingReproRunner {
 public:
  using Clock = std::chrono::steady_clock;
  // The longest a script may run (a predicted deadlock waits 20 s after JAX's start-up).
  static constexpr double kScriptSeconds = 90;
  // How far past the budget's end scripts may still run (the campaign's wall time stays within
  // its budget plus 5 s: the summary is written in the last second).
  static constexpr double kGraceSeconds = 4;

  // `python`: the campaign's JAX Python (--python, else $COLLFUZZ_JAX_PYTHON, else .venv-jax);
  // `log_dir`: where each script's stderr goes (LOG_DIR/repro/SIGNATURE.log). `shrink`: whether
  // the campaign shrinks findings (without it every written finding is final). `enabled` false
  // (--no-script-runs): nothing is run, and finish() records each finding as skipped.
  FindingReproRunner(std::filesystem::path findings_dir, std::string python,
                     std::filesystem::path log_dir, bool shrink, bool enabled = true);
  ~FindingReproRunner();
  FindingReproRunner(const FindingReproRunner&) = delete;
  FindingReproRunner& operator=(const FindingReproRunner&) = delete;

  // One look, never blocking: polls the running script, records its result, starts the next one.
  // `until`: the latest moment a script may run to (nullopt: no time budget).
  void step(std::optional<Clock::time_point> until);
  // The end of the campaign: runs every finding whose script has not run, until `until`; each
  // left then is recorded as not run. `interrupted`: nothing more is started.
  void finish(std::optional<Clock::time_point> until, bool interrupted);

  int scripts_run() const { return runs_; }

 private:
  struct Running {
    process::ChildProcess child;
    std::string stem;
    std::string digest;
    std::string last_stdout;
    Clock::time_point started;
    Clock::time_point kill_at;
    bool killed_for_time = false;  // stopped at `until`, not at kScriptSeconds
  };

  // The findings whose script is to run, in name order (`final_only`: those whose shrinking is
  // over); records the skipped ones (no script) on the way.
  std::vector<std::string> pending(bool final_only);
  void start(const std::string& stem, std::optional<Clock::time_point> until);
  void poll(std::optional<Clock::time_point> until);
  void record(const std::string& stem, const nlohmann::json& result);

  std::filesystem::path dir_;
  std::string python_;
  std::filesystem::path log_dir_;
  bool shrink_;
  bool enabled_;
  std::optional<Running> running_;
  Clock::time_point last_scan_{};
  // Findings with a result for their script as it is now (its modification time then).
  std::map<std::string, std::filesystem::file_time_type> settled_;
  int runs_ = 0;
};

// The result of one script run from its exit and its stderr: yes (an AssertionError), no (exit
// 0), error (anything else), with the line that says why. Public for the tests.
nlohmann::json classify_script_run(int wait_status, const std::string& stderr_text,
                                   const std::string& last_stdout);

}  // namespace collfuzz::campaign
