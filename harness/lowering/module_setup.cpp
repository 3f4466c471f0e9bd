#include "harness/lowering/module_setup.h"

#include "harness/core/pyrepr.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/mutants.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

std::int64_t cluster_barrier_count(const BarrierKey& key, const ClusterGeometry& geometry) {
  std::int64_t sum = 0;
  for (const auto& entry : key.dims) {
    std::int64_t size = 1;
    for (int d : entry) size *= geometry.cuda()[static_cast<std::size_t>(d)];
    sum += size;
  }
  const auto dims = static_cast<std::int64_t>(key.dims.size());
  const std::int64_t one = mutant_active(Mutant::kClusterBarrierCountOffByOne) ? 0 : 1;
  return key.arrival_count * (sum - dims + one);
}

ModuleLayout set_up_module(const Case& c, const Resources& rs, const ClusterGeometry& geometry) {
  ModuleLayout m;
  // lower_jaxpr_to_module, before _lower_as_gpu_kernel.
  if (rs.tmem && rs.tmem_collective) {
    raise(Stage::kModule, "ValueError",
          "Can't mix collective and non-collective TMEM allocations within the same kernel.",
          rule_id::kTmemMixed, "");
  }
  // _launch: _smem_tree_size([int8[scratch], barriers..., TMEM]).
  m.smem_scratch_bytes = align_to(rs.smem_scratch_bytes, kSmemAlignment);
  std::int64_t bytes = m.smem_scratch_bytes;
  for (const Resources::Count& k : rs.barrier_counts)
    bytes += k.count * k.key.num_barriers * kMbarrierBytes;
  if (rs.tmem || rs.tmem_collective) bytes += 4;
  m.smem_bytes = bytes;
  const std::int64_t max_smem = arch_major(c.target.arch) >= 9 ? 227 * 1024 : 163 * 1024;
  if (bytes > max_smem) {
    raise(Stage::kModule, "ValueError",
          "Mosaic GPU kernel exceeds available shared memory: smem_bytes=" + std::to_string(bytes) +
              " > max_smem_bytes=" + std::to_string(max_smem),
          rule_id::kSmemCapacity, "");
  }
  // 0.12.0.1: 16 CTA barriers, one per warpgroup and one CTA-wide reserved; collfuzz allocates
  // no CTA barrier of its own.
  if (jax_facts(c.target.jax).cta_barrier_budget) {
    const std::int64_t warpgroups = c.mesh.num_threads.value_or(1);
    const std::int64_t available = 16 - (1 + warpgroups);
    if (available < 0) {
      raise(Stage::kModule, "ValueError",
            "Too many CTA barriers requested: 0 requested, but only " + std::to_string(available) +
                " available (" + std::to_string(warpgroups) +
                " warpgroup barriers and 1 CTA-wide barrier reserved).",
            rule_id::kCtaBarrierBudget, "");
    }
  }
  // _construct_smem_reftree: one barrier memref per element of rs.barriers, initialised in order.
  std::int64_t offset = m.smem_scratch_bytes;
  for (const Resources::Count& k : rs.barrier_counts) {
    for (std::int64_t copy = 0; copy < k.count; ++copy) {
      const BarrierKey& key = k.key;
      if (key.cluster && key.leader_tracked) {
        if (key.dims.size() != 1) {
          raise(Stage::kModule, "NotImplementedError",
                "Only leader tracking for a single collective dimension is supported.",
                rule_id::kLeaderOneDim, *k.where);
        }
        if (key.grouped.front()) {
          raise(Stage::kModule, "NotImplementedError",
                "Only leader tracking for ungrouped collective dimensions is supported.",
                rule_id::kLeaderUngrouped, *k.where);
        }
      }
      if (key.num_barriers > 32) {
        raise(Stage::kModule, "NotImplementedError", "Only up to 32 barriers per group supported",
              rule_id::kBarrierMax32, *k.where);
      }
      MbarrierGroup group;
      group.key = key;
      group.first = static_cast<std::int64_t>(m.mbarriers.size());
      if (key.cluster) {
        group.hardware_count = cluster_barrier_count(key, geometry);
      } else {
        // Lane: the key already holds num_arrivals * 128. Warpgroup: InitializeBarrierOp's lowering
        // multiplies by the warpgroup size unless the barrier orders the tensor core.
        const bool lane = c.target.semantics == Semantics::kLane;
        group.hardware_count = (lane || key.orders_tensor_core)
                                   ? key.arrival_count
                                   : key.arrival_count * kWarpgroupLanes;
      }
      for (std::int64_t i = 0; i < key.num_barriers; ++i) {
        m.mbarriers.push_back(MbarrierInit{offset, group.hardware_count});
        offset += kMbarrierBytes;
      }
      m.groups.push_back(std::move(group));
    }
  }
  if (rs.tmem_collective && geometry.num_ctas() % 2 != 0) {
    const auto& cl = geometry.cuda();
    raise(Stage::kModule, "ValueError",
          "Collective TMEM allocations are only supported for clusters with an even number of "
          "blocks in them. Got "
          "cluster: " +
              py::tuple_of_ints(std::vector<std::int64_t>(cl.begin(), cl.end())),
          rule_id::kTmemOddCluster, "");
  }
  return m;
}

}  // namespace collfuzz::lowering
