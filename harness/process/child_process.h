// A child process of collfuzz: a program started with pipes on its stdin and stdout (an external
// executor, the CUDA worker) or a forked copy of collfuzz running a function (a campaign worker,
// a crash reporter, an isolated loop). Every child runs in a process group of its own, dies with
// its parent (PR_SET_PDEATHSIG, armed before the parent can have gone), is registered in the
// parent's group table while it runs (process_groups.h), and is killed and reaped with its whole
// group when it is stopped, has exited, or the object is destroyed. Lines from a program are read
// with a deadline and a length cap, in memory bounded by the cap.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collfuzz::process {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts `argv` (argv[0] a path) with pipes on stdin and stdout and its stderr on `stderr_fd`
  // (-1: /dev/null). It is SIGKILLed when this process dies.
  bool spawn(const std::vector<std::string>& argv, int stderr_fd, std::string& why_not);
  // Forks; the child runs body() and exits with its result (3 when it throws). The child gets
  // SIGTERM when this process dies, which kills the groups of its own children and ends it.
  bool fork(const std::function<int()>& body, std::string& why_not);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  bool write_line(std::string_view line);

  enum class Read { kLine, kTimeout, kEof, kTooLong };
  // One line (without its newline) within `seconds`. kTooLong when `max_bytes` arrived without a
  // newline: nothing more is read (the caller stops the process).
  Read read_line(double seconds, std::size_t max_bytes, std::string& line);
  // Exactly `n` bytes (what follows a line in a binary framing); kLine when they came.
  Read read_bytes(std::size_t n, double seconds, std::string& out);

  // The wait status once the child has exited (its group is then killed and it is reaped);
  // nullopt while it runs. Never blocks.
  std::optional<int> poll_exit();
  // Blocks until the child exits; its wait status.
  int wait();
  // Sends `signal` to the child's whole group (it keeps running() until reaped).
  void signal_group(int signal) const;
  // SIGKILL to the whole group, then reaps; the wait status (-1 when nothing ran).
  int stop();

 private:
  // Reads what is available within the deadline; the buffer grows to at most `limit` bytes
  // (plus one read). False on timeout or end of output.
  bool fill(std::chrono::steady_clock::time_point deadline, std::size_t limit, Read& why);
  int reap(bool block, bool& exited);
  void close_pipes();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  std::size_t scanned_ = 0;  // bytes of buffer_ known to hold no newline
  bool eof_ = false;
};

// "SIGSEGV", "SIGABRT", ... for a signal number.
std::string signal_name(int signal);

}  // namespace collfuzz::process
