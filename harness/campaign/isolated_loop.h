// A loop over case indices that survives the code it runs crashing: the loop runs in a forked
// child; when the child dies (a signal, an abort), the index it was on is reported and a new
// child continues after it. `collfuzz gen --stats` and the coverage test use it, so that a
// reference that crashes on a generated case is reported instead of ending the run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace collfuzz::campaign {

struct IsolatedCrash {
  std::uint64_t index = 0;
  int signal = 0;  // 0: the child exited with a non-zero status instead
  int exit_status = 0;
};

// Calls body(i) for i in [begin, end), in order, in child processes. What body() computes must
// reach the caller through shared memory (SharedMemory) or files. Returns the crashes.
std::vector<IsolatedCrash> run_isolated(std::uint64_t begin, std::uint64_t end,
                                        const std::function<void(std::uint64_t)>& body);

// "SIGSEGV", "SIGABRT", ... for a signal number.
std::string signal_name(int signal);

}  // namespace collfuzz::campaign
