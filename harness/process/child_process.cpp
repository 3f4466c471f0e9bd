#include "harness/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

#include "harness/process/process_groups.h"

namespace collfuzz::process {
namespace {

std::chrono::steady_clock::time_point deadline_in(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(std::min(seconds, 1e9)));
}

}  // namespace

ChildProcess::~ChildProcess() { stop(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = std::exchange(other.pid_, -1);
    to_child_ = std::exchange(other.to_child_, -1);
    from_child_ = std::exchange(other.from_child_, -1);
    buffer_ = std::move(other.buffer_);
    scanned_ = std::exchange(other.scanned_, 0);
    eof_ = std::exchange(other.eof_, false);
  }
  return *this;
}

bool ChildProcess::spawn(const std::vector<std::string>& argv, int stderr_fd,
                         std::string& why_not) {
  stop();
  if (argv.empty()) {
    why_not = "no program";
    return false;
  }
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    why_not = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    why_not = std::string("pipe: ") + std::strerror(errno);
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return false;
  }
  std::vector<std::string> args_copy = argv;
  std::vector<char*> args;
  for (auto& a : args_copy) args.push_back(a.data());
  args.push_back(nullptr);
  // A dead child must not kill collfuzz through SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    why_not = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    if (!enter_child(parent, SIGKILL)) ::_exit(127);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    if (stderr_fd >= 0) {
      ::dup2(stderr_fd, 2);
    } else if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
      ::dup2(null, 2);
    }
    ::execv(args[0], args.data());
    // Only async-signal-safe calls between fork and exec (the parent may have threads).
    const char* reason = std::strerror(errno);
    for (const char* part : {"exec ", static_cast<const char*>(args[0]), ": ", reason, "\n"}) {
      [[maybe_unused]] const auto n = ::write(2, part, std::strlen(part));
    }
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that the group exists before anyone signals it
  register_group(pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  buffer_.clear();
  scanned_ = 0;
  eof_ = false;
  return true;
}

bool ChildProcess::fork(const std::function<int()>& body, std::string& why_not) {
  stop();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    why_not = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    if (!enter_child(parent, SIGTERM)) ::_exit(127);
    die_with_children_on(SIGTERM);
    int code = 3;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::cerr << "collfuzz: " << e.what() << "\n";
    } catch (...) {
    }
    std::cout.flush();
    std::cerr.flush();
    kill_groups(group_table());
    ::_exit(code);  // never unwind into the parent's copy of the stack
  }
  ::setpgid(pid, pid);
  register_group(pid);
  pid_ = pid;
  return true;
}

bool ChildProcess::write_line(std::string_view line) {
  if (to_child_ < 0) return false;
  std::string data(line);
  data += '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(to_child_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool ChildProcess::fill(std::chrono::steady_clock::time_point deadline, std::size_t limit,
                        Read& why) {
  while (true) {
    if (eof_ || from_child_ < 0) {
      why = Read::kEof;
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      why = Read::kTimeout;
      return false;
    }
    pollfd p{from_child_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) {
      eof_ = true;
      continue;
    }
    if (r <= 0) continue;
    // Never past the limit: the caller sees a full buffer and decides.
    if (buffer_.size() >= limit) return true;
    char chunk[1 << 16];
    const ssize_t n = ::read(from_child_, chunk, std::min(sizeof chunk, limit - buffer_.size()));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      eof_ = true;
    } else if (n == 0) {
      eof_ = true;
    } else {
      const auto got = static_cast<std::size_t>(n);
      if (const std::size_t need = buffer_.size() + got; need > buffer_.capacity()) {
        // Small lines grow geometrically; past 1 MiB the buffer is reserved at the limit at once
        // (pages are touched only as bytes come), so that memory stays bounded by the limit
        // instead of the sum of every doubling.
        constexpr std::size_t kSmall = std::size_t{1} << 20;
        buffer_.reserve(need <= kSmall ? std::max(need, 2 * buffer_.capacity())
                                       : std::max(need, limit));
      }
      buffer_.append(chunk, got);
      return true;
    }
  }
}

ChildProcess::Read ChildProcess::read_line(double seconds, std::size_t max_bytes,
                                           std::string& line) {
  const auto deadline = deadline_in(seconds);
  while (true) {
    // Search only what arrived since the last look: an answer can be many MiB long.
    const auto nl = buffer_.find('\n', scanned_);
    if (nl != std::string::npos && nl <= max_bytes) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      scanned_ = 0;
      return Read::kLine;
    }
    if (nl != std::string::npos || buffer_.size() > max_bytes) {
      // Bounded memory: drop what came, read no more.
      buffer_.clear();
      buffer_.shrink_to_fit();
      scanned_ = 0;
      eof_ = true;
      return Read::kTooLong;
    }
    scanned_ = buffer_.size();
    Read why = Read::kEof;
    if (!fill(deadline, max_bytes + 1, why)) return why;
  }
}

ChildProcess::Read ChildProcess::read_bytes(std::size_t n, double seconds, std::string& out) {
  const auto deadline = deadline_in(seconds);
  while (buffer_.size() < n) {
    Read why = Read::kEof;
    if (!fill(deadline, n, why)) return why;
  }
  out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  scanned_ = 0;
  return Read::kLine;
}

int ChildProcess::reap(bool block, bool& exited) {
  exited = false;
  if (pid_ <= 0) return -1;
  // Wait without reaping: while the leader is a zombie its group id cannot be reused, so the
  // group can be killed safely before the leader is reaped.
  siginfo_t info{};
  while (true) {
    info.si_pid = 0;
    const int r =
        ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
    if (r == 0) break;
    if (errno == EINTR) continue;
    // ECHILD: not ours to wait for any more (should not happen); forget it.
    unregister_group(pid_);
    pid_ = -1;
    exited = true;
    return -1;
  }
  if (info.si_pid == 0) return 0;  // still running
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_group(pid_);
  pid_ = -1;
  exited = true;
  close_pipes();
  return status;
}

std::optional<int> ChildProcess::poll_exit() {
  bool exited = false;
  const int status = reap(false, exited);
  if (!exited) return std::nullopt;
  return status;
}

int ChildProcess::wait() {
  bool exited = false;
  return reap(true, exited);
}

void ChildProcess::signal_group(int signal) const {
  if (pid_ > 0) ::kill(-pid_, signal);
}

void ChildProcess::close_pipes() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  buffer_.clear();
  scanned_ = 0;
  eof_ = false;
}

int ChildProcess::stop() {
  close_pipes();
  if (pid_ <= 0) return -1;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  return wait();
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "SIG" + std::to_string(signal);
  }
}

}  // namespace collfuzz::process
