// An executor that is a separate, persistent program speaking line-delimited JSON over its stdin
// and stdout (docs/external-executor-protocol.md), run as a process::ChildProcess. A case that
// takes longer than the per-case timeout kills the process (and its process group) and is
// reported as a timeout; a process that dies, or writes any line that breaks the protocol (not
// JSON, another id, no outcome, an unreadable outcome, longer than kMaxLineBytes), is killed and
// the case in flight is a crash; either way the next case starts a fresh process and the run goes
// on. A process that does not say hello within the startup timeout makes that case `unavailable`;
// after kMaxFailedStarts such starts in a row the executor stays unavailable.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/executors/executor.h"
#include "harness/process/child_process.h"
#include "harness/process/log_file.h"

namespace collfuzz {

class ExternalExecutor : public Executor {
 public:
  // The longest line the harness reads from an executor (the case-file limit): a longer one is a
  // protocol error, refused after reading at most this much.
  static constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;
  static constexpr int kMaxFailedStarts = 3;

  // `argv[0]` is the program; its stderr goes to a log in `log_dir` ("": a private temporary
  // directory, removed with the executor); its last lines go into crash reports.
  ExternalExecutor(std::string name, Profile profile, std::vector<std::string> argv,
                   double case_timeout_seconds, double startup_timeout_seconds,
                   const std::string& log_dir = "");
  ~ExternalExecutor() override;
  ExternalExecutor(const ExternalExecutor&) = delete;
  ExternalExecutor& operator=(const ExternalExecutor&) = delete;

  std::string name() const override { return name_; }
  Profile profile() const override { return profile_; }
  std::string unavailable_reason() const override;
  Outcome run(const Case& c) override;
  // Starts the program (when it is not running) and reads its hello, running no case: why it
  // cannot run cases here ("" when its hello says it can). Bounded by the startup timeout.
  std::string probe();
  std::int64_t sample_every() const override { return sample_every_; }
  void set_sample_every(std::int64_t n) { sample_every_ = n; }
  bool observes_stage(std::string_view stage) const override;
  // The stages whose diagnostics the program never reports (observes_stage()).
  void set_unobserved_stages(std::vector<std::string> stages) { unobserved_ = std::move(stages); }

  // What the program said in its hello line (after the first run).
  const std::map<std::string, std::string>& info() const { return info_; }
  int restarts() const { return restarts_; }
  const std::string& log_path() const { return log_.path(); }

 private:
  bool start(std::string& why_not);
  // Kills the process (and its group) after a failure; the next case starts a new one.
  void restart_later();
  std::string stderr_tail() const;
  Outcome broken(OutcomeKind kind, std::string reason);

  std::string name_;
  Profile profile_;
  std::vector<std::string> argv_;
  double case_timeout_;
  double startup_timeout_;
  process::LogFile log_;
  process::ChildProcess child_;
  std::string unavailable_;    // the program's own "unavailable" answer
  std::string start_failure_;  // why the last start failed
  int failed_starts_ = 0;      // in a row
  std::map<std::string, std::string> info_;
  std::int64_t next_id_ = 1;
  std::int64_t sample_every_ = 1;
  std::vector<std::string> unobserved_;
  int restarts_ = 0;
};

// The JAX executors (harness/jax/collfuzz_jax.py) in their three modes.
std::unique_ptr<Executor> make_jax_executor(const std::string& mode,
                                            const ExecutorOptions& options);

}  // namespace collfuzz
