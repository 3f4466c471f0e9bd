#include "harness/campaign/campaign_options.h"

namespace collfuzz::campaign {

std::vector<std::string> available_executors(const ExecutorOptions& options) {
  std::vector<std::string> out;
  for (const auto& info : executor_registry()) {
    if (make_executor(info.name, options)->unavailable_reason().empty())
      out.emplace_back(info.name);
  }
  return out;
}

}  // namespace collfuzz::campaign
