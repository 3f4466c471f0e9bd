// An executor that is a separate, persistent program speaking line-delimited JSON over its stdin
// and stdout (docs/external-executor-protocol.md). A case that takes longer than the per-case
// timeout kills the process (and its process group) and is reported as a timeout; a process that
// dies is reported as a crash; either way the next case starts a fresh process and the run goes on.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/executors/executor.h"

namespace collfuzz {

class ExternalExecutor : public Executor {
 public:
  // `argv[0]` is the program; `log_path` collects its stderr (its last lines go into crash
  // reports).
  ExternalExecutor(std::string name, Profile profile, std::vector<std::string> argv,
                   double case_timeout_seconds, double startup_timeout_seconds);
  ~ExternalExecutor() override;
  ExternalExecutor(const ExternalExecutor&) = delete;
  ExternalExecutor& operator=(const ExternalExecutor&) = delete;

  std::string name() const override { return name_; }
  Profile profile() const override { return profile_; }
  std::string unavailable_reason() const override;
  Outcome run(const Case& c) override;
  std::int64_t sample_every() const override { return sample_every_; }
  void set_sample_every(std::int64_t n) { sample_every_ = n; }

  // What the program said in its hello line (after the first run).
  const std::map<std::string, std::string>& info() const { return info_; }
  int restarts() const { return restarts_; }

 private:
  bool start(std::string& why_not);
  void stop();
  // One line from the process within `seconds`; nullopt on timeout, "" + eof_ on EOF.
  std::optional<std::string> read_line(double seconds);
  bool write_all(const std::string& data);
  std::string stderr_tail() const;

  std::string name_;
  Profile profile_;
  std::vector<std::string> argv_;
  double case_timeout_;
  double startup_timeout_;
  std::string log_path_;

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  bool eof_ = false;
  std::string unavailable_;  // the program's own "unavailable" answer
  std::map<std::string, std::string> info_;
  std::int64_t next_id_ = 1;
  std::int64_t sample_every_ = 1;
  int restarts_ = 0;
};

// The JAX executors (harness/jax/collfuzz_jax.py) in their three modes.
std::unique_ptr<Executor> make_jax_executor(const std::string& mode,
                                            const ExecutorOptions& options);

}  // namespace collfuzz
