#include "harness/campaign/executor_releases.h"

#include <algorithm>
#include <cstring>

#include "harness/campaign/isolated_loop.h"
#include "harness/campaign/shared_memory.h"
#include "harness/executors/external_executor.h"

namespace collfuzz::campaign {
namespace {

// What the probe child reports for each executor, through shared memory.
struct ReleaseBoard {
  static constexpr std::size_t kMax = 16;
  static constexpr std::size_t kText = 64;
  int answered[kMax];
  char jax[kMax][kText];
};

}  // namespace

std::vector<ExecutorRelease> executors_off_release(const std::vector<std::string>& executors,
                                                   const ExecutorOptions& options, JaxVersion v) {
  std::vector<std::string> external;
  for (const auto& name : executors) {
    const auto ex = make_executor(name, options);
    if (ex && dynamic_cast<const ExternalExecutor*>(ex.get()) != nullptr) external.push_back(name);
  }
  external.resize(std::min(external.size(), ReleaseBoard::kMax));
  std::vector<ExecutorRelease> out;
  if (external.empty()) return out;
  SharedMemory<ReleaseBoard> board;
  run_isolated(0, 1, [&](std::uint64_t) {
    for (std::size_t k = 0; k < external.size(); ++k) {
      const auto ex = make_executor(external[k], options);
      auto* ext = dynamic_cast<ExternalExecutor*>(ex.get());
      std::string jax;
      if (ext && ext->probe().empty()) {
        const auto it = ext->info().find("jax_version");
        if (it != ext->info().end()) jax = it->second;
      }
      std::strncpy(board->jax[k], jax.c_str(), ReleaseBoard::kText - 1);
      board->answered[k] = 1;
    }
  });
  for (std::size_t k = 0; k < external.size(); ++k) {
    if (!board->answered[k]) continue;
    const std::string jax = board->jax[k];
    // Only JAX executors announce a release; one that announces none is not a JAX executor.
    if (jax.empty() || jax == "null") continue;
    if (jax != to_string(v)) out.push_back({external[k], jax});
  }
  return out;
}

}  // namespace collfuzz::campaign
