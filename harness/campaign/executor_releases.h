// `collfuzz fuzz --jax V`: which of a campaign's JAX executors run another JAX release than the
// one the campaign judges by. Their results on V-pinned cases are version mismatches, never
// compared (CaseCheck skips them, as replay reports them), so the campaign says so up front.
#pragma once

#include <string>
#include <vector>

#include "harness/core/jax_version.h"
#include "harness/executors/executor.h"

namespace collfuzz::campaign {

struct ExecutorRelease {
  std::string executor;
  std::string jax;  // the release its hello announces ("" when it did not start or said none)
};

// Starts each external executor of `executors` once (its hello only, no case runs, in a child
// process) and returns those whose announced JAX release is not `v`.
std::vector<ExecutorRelease> executors_off_release(const std::vector<std::string>& executors,
                                                   const ExecutorOptions& options, JaxVersion v);

}  // namespace collfuzz::campaign
