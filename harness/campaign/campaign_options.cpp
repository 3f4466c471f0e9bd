#include "harness/campaign/campaign_options.h"

#include <algorithm>
#include <cstring>

#include "harness/campaign/isolated_loop.h"
#include "harness/campaign/shared_memory.h"
#include "harness/executors/external_executor.h"

namespace collfuzz::campaign {
namespace {

// What the probe child reports for each executor, through shared memory.
struct ProbeBoard {
  static constexpr std::size_t kMax = 16;
  static constexpr std::size_t kReason = 512;
  int answered[kMax];
  char reason[kMax][kReason];
};

}  // namespace

std::vector<std::string> available_executors(const ExecutorOptions& options) {
  std::vector<std::string> out;
  for (const auto& info : executor_registry()) {
    if (make_executor(info.name, options)->unavailable_reason().empty())
      out.emplace_back(info.name);
  }
  return out;
}

std::vector<UnavailableExecutor> unavailable_executors(const std::vector<std::string>& executors,
                                                       const ExecutorOptions& options) {
  std::vector<UnavailableExecutor> out;
  std::vector<std::string> to_probe;
  bool one_works = false;
  for (const auto& name : executors) {
    const auto ex = make_executor(name, options);
    if (std::string why = ex->unavailable_reason(); !why.empty()) {
      out.push_back({name, std::move(why)});
    } else if (dynamic_cast<const ExternalExecutor*>(ex.get()) == nullptr) {
      one_works = true;  // an in-process executor that says it can run, runs
    } else {
      to_probe.push_back(name);
    }
  }
  if (one_works || to_probe.empty()) return out;
  to_probe.resize(std::min(to_probe.size(), ProbeBoard::kMax));
  SharedMemory<ProbeBoard> board;
  // Each external executor is started and its hello read (bounded by --timeout); no case runs,
  // so a slow executor costs its start-up only.
  run_isolated(0, 1, [&](std::uint64_t) {
    for (std::size_t k = 0; k < to_probe.size(); ++k) {
      const auto ex = make_executor(to_probe[k], options);
      auto* external = dynamic_cast<ExternalExecutor*>(ex.get());
      const std::string why = external ? external->probe() : ex->unavailable_reason();
      std::strncpy(board->reason[k], why.c_str(), ProbeBoard::kReason - 1);
      board->answered[k] = 1;
      if (why.empty()) break;  // one that compares is enough
    }
  });
  for (std::size_t k = 0; k < to_probe.size(); ++k) {
    // No answer (the probe crashed, or stopped at a working one): not known to be unavailable.
    if (board->answered[k] && board->reason[k][0] != '\0')
      out.push_back({to_probe[k], board->reason[k]});
  }
  return out;
}

}  // namespace collfuzz::campaign
