// Host entry points of the precompiled kernels (gpu/interpreter_kernel.cu), callable from plain
// C++: the plan interpreter and the empty cluster kernel (the benchmarks' launch floor and the
// launch probe), both launched with cudaLaunchKernelEx and a cluster-dimension attribute.
#pragma once

#include <cstdint>

#include "gpu/device_plan.h"

namespace collfuzz::gpu {

struct KernelConfig {
  std::uint32_t grid[3] = {1, 1, 1};     // blocks
  std::uint32_t cluster[3] = {1, 1, 1};  // blocks per cluster
  std::uint32_t block_threads = 128;
  std::uint32_t smem_bytes = 0;
  void* stream = nullptr;  // cudaStream_t
};

// Each returns the cudaError_t of cudaLaunchKernelEx.
int launch_interpreter(const KernelConfig& config, const DevLaunch& params);
int launch_empty_cluster(const KernelConfig& config);

// The kernels' host symbols, for cudaFuncSetAttribute, cudaFuncGetAttributes, occupancy queries
// and cudaGetFuncBySymbol.
const void* interpreter_symbol();
const void* empty_cluster_symbol();

// Fills a cudaLaunchConfig_t-compatible occupancy query: the number of clusters of `config` that
// can be co-resident (cudaOccupancyMaxActiveClusters), or -1 with the cudaError_t in `error`.
int max_active_clusters(const KernelConfig& config, int& error);

}  // namespace collfuzz::gpu
