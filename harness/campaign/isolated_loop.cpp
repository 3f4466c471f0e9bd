#include "harness/campaign/isolated_loop.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "harness/campaign/shared_memory.h"

namespace collfuzz::campaign {

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
    default:
      return "SIG" + std::to_string(signal);
  }
}

std::vector<IsolatedCrash> run_isolated(std::uint64_t begin, std::uint64_t end,
                                        const std::function<void(std::uint64_t)>& body) {
  SharedMemory<std::atomic<std::uint64_t>> current;
  std::vector<IsolatedCrash> crashes;
  std::uint64_t next = begin;
  while (next < end) {
    current->store(next);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      try {
        for (std::uint64_t i = next; i < end; ++i) {
          current->store(i, std::memory_order_relaxed);
          body(i);
        }
      } catch (...) {
        ::_exit(3);  // never unwind into the parent's copy of the stack
      }
      current->store(end);
      ::_exit(0);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
    IsolatedCrash crash;
    crash.index = current->load();
    crash.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    crash.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    crashes.push_back(crash);
    next = crash.index + 1;
  }
  return crashes;
}

}  // namespace collfuzz::campaign
