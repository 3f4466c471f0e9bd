// The CUDA executor's worker process: a process::ChildProcess (its own process group, killed with
// its parent and reaped with its group) spoken to in lines, its stderr in a process::LogFile (in
// `log_dir`, a campaign's logs directory, or a private temporary directory).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/process/child_process.h"
#include "harness/process/log_file.h"

namespace collfuzz::gpu {

class WorkerProcess {
 public:
  // Lines longer than this are a protocol error (the outcomes' bytes travel outside the lines).
  static constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

  WorkerProcess(std::vector<std::string> argv, const std::string& log_dir);
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool start(std::string& why_not);
  bool running() const { return child_.running(); }
  bool write_line(const std::string& line) { return child_.write_line(line); }

  enum class Read { kLine, kTimeout, kEof };
  // A line over kMaxLineBytes reads as kEof (the worker is then killed and restarted).
  Read read_line(double seconds, std::string& line);
  // Exactly `n` bytes (what follows a line in the binary framing); kLine when they came.
  Read read_bytes(std::size_t n, double seconds, std::string& out);

  void kill() { child_.stop(); }
  // The last `bytes` of its stderr log, for crash reports.
  std::string stderr_tail(std::size_t bytes = 1200) const { return log_.tail(bytes); }
  const std::string& log_path() const { return log_.path(); }

 private:
  static Read convert(process::ChildProcess::Read r);

  std::vector<std::string> argv_;
  process::LogFile log_;
  process::ChildProcess child_;
};

}  // namespace collfuzz::gpu
