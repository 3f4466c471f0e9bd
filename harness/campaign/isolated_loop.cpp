#include "harness/campaign/isolated_loop.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "harness/campaign/shared_memory.h"
#include "harness/process/child_process.h"

namespace collfuzz::campaign {

std::string signal_name(int signal) { return process::signal_name(signal); }

std::vector<IsolatedCrash> run_isolated(std::uint64_t begin, std::uint64_t end,
                                        const std::function<void(std::uint64_t)>& body) {
  SharedMemory<std::atomic<std::uint64_t>> current;
  std::vector<IsolatedCrash> crashes;
  std::uint64_t next = begin;
  while (next < end) {
    current->store(next);
    process::ChildProcess child;
    std::string why_not;
    const bool forked = child.fork(
        [&] {
          for (std::uint64_t i = next; i < end; ++i) {
            current->store(i, std::memory_order_relaxed);
            body(i);
          }
          current->store(end);
          return 0;
        },
        why_not);
    if (!forked) throw std::runtime_error(why_not);
    const int status = child.wait();
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
