#include "harness/executors/sim_executor.h"

#include "harness/executors/registry_entries.h"

namespace collfuzz {

Outcome SimExecutor::run(const Case& c) {
  Outcome o = simulator_.run(c);
  o.executor = name();
  return o;
}

std::unique_ptr<Executor> make_sim_executor(const ExecutorOptions&) {
  return std::make_unique<SimExecutor>();
}

}  // namespace collfuzz
