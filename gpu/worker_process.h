// A child process spoken to in lines: started with pipes on its stdin and stdout, in its own
// process group, its stderr appended to a log file; lines are read with a deadline; killing it
// kills its whole group and reaps it. The CUDA executor's worker runs in one.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace collfuzz::gpu {

class WorkerProcess {
 public:
  WorkerProcess(std::vector<std::string> argv, std::string log_path);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool start(std::string& why_not);
  bool running() const { return pid_ > 0; }
  bool write_line(const std::string& line);

  enum class Read { kLine, kTimeout, kEof };
  Read read_line(double seconds, std::string& line);
  // Exactly `n` bytes (what follows a line in the binary framing); kLine when they came.
  Read read_bytes(std::size_t n, double seconds, std::string& out);

  void kill();
  // The last `bytes` of its stderr log, for crash reports.
  std::string stderr_tail(std::size_t bytes = 1200) const;
  const std::string& log_path() const { return log_path_; }

 private:
  // Reads what is available within the deadline into buffer_; false on timeout or EOF.
  bool fill(std::chrono::steady_clock::time_point deadline, Read& why);

  std::vector<std::string> argv_;
  std::string log_path_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  std::size_t scanned_ = 0;  // bytes of buffer_ known to hold no newline
  bool eof_ = false;
};

}  // namespace collfuzz::gpu
