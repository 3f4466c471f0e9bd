// What lower_jaxpr_to_module and mosaic_gpu.core._launch do with the estimate before any lowering
// rule runs: the TMEM mixing check, the dynamic SMEM size and its capacity check, and the
// initialisation of every mbarrier group (_construct_smem_reftree: BarrierRef /
// DialectBarrierRef / CollectiveBarrierRef.initialize, in the estimate's Counter order), which
// also fixes each group's place after the scratch and its hardware arrival count.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/plan.h"
#include "harness/lowering/resource_estimate.h"

namespace collfuzz::lowering {

struct MbarrierGroup {
  BarrierKey key;
  std::int64_t first = 0;           // index of its first mbarrier
  std::int64_t hardware_count = 1;  // mbarrier.init count of each of its mbarriers
};

struct ModuleLayout {
  std::int64_t smem_scratch_bytes = 0;
  std::int64_t smem_bytes = 0;
  std::vector<MbarrierGroup> groups;  // rs.barriers order: Counter keys, each repeated count times
  std::vector<MbarrierInit> mbarriers;
};

// The hardware arrival count of a ClusterBarrier: num_arrivals * (sum(sizes) - len(dims) + 1).
std::int64_t cluster_barrier_count(const BarrierKey& key, const ClusterGeometry& geometry);

// Raises the module-stage diagnostics.
ModuleLayout set_up_module(const Case& c, const Resources& rs, const ClusterGeometry& geometry);

}  // namespace collfuzz::lowering
