// The factories named in executors.def.
#pragma once

#include <memory>

#include "harness/executors/executor.h"

namespace collfuzz {

// harness/executors/external_executor.cpp
std::unique_ptr<Executor> make_jax_interpret_executor(const ExecutorOptions& options);
std::unique_ptr<Executor> make_jax_gpu_executor(const ExecutorOptions& options);
std::unique_ptr<Executor> make_jax_lower_executor(const ExecutorOptions& options);
std::unique_ptr<Executor> make_jax_ir_executor(const ExecutorOptions& options);

// harness/executors/sim_executor.cpp
std::unique_ptr<Executor> make_sim_executor(const ExecutorOptions& options);

// gpu/cuda_executor.cpp
std::unique_ptr<Executor> make_cuda_executor(const ExecutorOptions& options);

}  // namespace collfuzz
