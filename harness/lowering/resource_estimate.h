// The whole-kernel resource estimate (lowering.py: Resources, _estimate_resources,
// _run_scoped_resource_estimator), which JAX runs over every run_scoped before any lowering rule:
// SMEM scratch bytes (each allocation rounded up to 1024; nested scopes add, siblings take the
// max), TMEM use, and a Counter of mbarrier groups keyed like mgpu.Barrier / mgpu.ClusterBarrier
// (nested scopes add, siblings take the max). Raises the estimate-stage diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/kernel_trace.h"

namespace collfuzz::lowering {

inline constexpr std::int64_t kSmemAlignment = 1024;  // gpu_core.SMEM_ALIGNMENT
inline constexpr std::int64_t kMbarrierBytes = 8;     // utils.MBARRIER_BYTES

std::int64_t align_to(std::int64_t x, std::int64_t alignment);

// mgpu.Barrier(arrival_count, num_barriers, orders_tensor_core) or mgpu.ClusterBarrier(
// collective_dims, arrival_count, num_barriers, orders_tensor_core=, leader_tracked=), compared
// as the frozen dataclasses compare.
struct BarrierKey {
  bool cluster = false;
  std::int64_t arrival_count = 1;
  std::int64_t num_barriers = 1;
  bool orders_tensor_core = false;
  bool leader_tracked = false;
  std::vector<std::vector<int>> dims;  // ClusterBarrier: the resolved CUDA dims of each entry
  std::vector<bool> grouped;           // ClusterBarrier: the entry is a tuple of axes
  bool operator==(const BarrierKey&) const = default;
};

// The key a Barrier or ClusterBarrier allocation gets; `arrival_multiplier` is 128 under Lane
// semantics and 1 under Warpgroup. ClusterBarrier axes must resolve (checked by the estimator).
BarrierKey barrier_key(const Alloc& a, std::int64_t arrival_multiplier,
                       const ClusterGeometry& geometry);

struct Resources {
  std::int64_t smem_scratch_bytes = 0;
  bool tmem = false;
  bool tmem_collective = false;
  // collections.Counter, in insertion order; `where` is the first run_scoped with the key.
  struct Count {
    BarrierKey key;
    std::int64_t count = 0;
    const std::string* where = nullptr;  // JSON path of that run_scoped
  };
  std::vector<Count> barrier_counts;

  void add(const Resources& other);  // Resources.__add__ (nested scopes)
  void or_(const Resources& other);  // Resources.or_ (sibling scopes, cond branches)
};

Resources estimate_resources(const Case& c, const TracedBody& kernel,
                             const ClusterGeometry& geometry);

}  // namespace collfuzz::lowering
