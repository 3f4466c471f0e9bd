#include "harness/campaign/campaign_options.h"

#include <algorithm>

#include "harness/executors/executor.h"

namespace collfuzz::campaign {

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
  for (const auto& name : executors) {
    if (std::string why = make_executor(name, options)->unavailable_reason(); !why.empty())
      out.push_back({name, std::move(why)});
  }
  return out;
}

}  // namespace collfuzz::campaign
