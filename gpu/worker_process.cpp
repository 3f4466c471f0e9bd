#include "gpu/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace collfuzz::gpu {

WorkerProcess::WorkerProcess(std::vector<std::string> argv, std::string log_path)
    : argv_(std::move(argv)), log_path_(std::move(log_path)) {}

WorkerProcess::~WorkerProcess() { kill(); }

bool WorkerProcess::start(std::string& why_not) {
  kill();
  if (argv_.empty()) {
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
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    why_not = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) ::dup2(log, 2);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  buffer_.clear();
  scanned_ = 0;
  eof_ = false;
  // A dead child must not kill the harness through SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}

bool WorkerProcess::write_line(const std::string& line) {
  if (to_child_ < 0) return false;
  const std::string data = line + "\n";
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

bool WorkerProcess::fill(std::chrono::steady_clock::time_point deadline, Read& why) {
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
      why = Read::kEof;
      return false;
    }
    if (r <= 0) continue;
    char chunk[1 << 16];
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      eof_ = true;
    } else if (n == 0) {
      eof_ = true;
    } else {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      if (buffer_.size() > (std::size_t{4} << 30)) eof_ = true;  // a runaway process
      return true;
    }
  }
}

WorkerProcess::Read WorkerProcess::read_line(double seconds, std::string& line) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  while (true) {
    // Search only what arrived since the last look: an answer can be many MiB long.
    const auto nl = buffer_.find('\n', scanned_);
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      scanned_ = 0;
      return Read::kLine;
    }
    scanned_ = buffer_.size();
    Read why = Read::kEof;
    if (!fill(deadline, why)) return why;
  }
}

WorkerProcess::Read WorkerProcess::read_bytes(std::size_t n, double seconds, std::string& out) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  while (buffer_.size() < n) {
    Read why = Read::kEof;
    if (!fill(deadline, why)) return why;
  }
  out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  scanned_ = 0;
  return Read::kLine;
}

void WorkerProcess::kill() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  buffer_.clear();
  scanned_ = 0;
  eof_ = false;
}

std::string WorkerProcess::stderr_tail(std::size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  const auto keep = static_cast<std::streamoff>(bytes);
  in.seekg(size > keep ? size - keep : 0);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace collfuzz::gpu
