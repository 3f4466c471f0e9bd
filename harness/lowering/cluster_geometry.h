// The modelled cluster as Mosaic GPU lays it out: Pallas cluster axes mapped onto CUDA x/y/z
// (lower_jaxpr_to_module pads the cluster to 3 dims and reverses it, so the last Pallas name is
// x), CTA ranks x + y*sx + z*sx*sy, and the index arithmetic of utils.cluster_idx,
// utils.cluster_collective_mask, _resolve_cluster_axis and _axis_index_rule.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::lowering {

class ClusterGeometry {
 public:
  // Valid once the mesh passed plgpu.Mesh's checks (at most 3 cluster dims).
  explicit ClusterGeometry(const Case& c);

  // Cluster sizes along CUDA x, y, z.
  const std::array<std::int64_t, 3>& cuda() const { return cuda_; }
  std::int64_t num_ctas() const { return num_ctas_; }
  std::int64_t threads_per_cta() const { return threads_; }  // Pallas threads (warpgroups)
  const std::string* thread_name() const { return thread_name_; }

  std::int64_t cuda_coord(std::int64_t rank, int dim) const;
  // Index along each Pallas cluster axis, declaration order.
  std::vector<std::int64_t> pallas_coords(std::int64_t rank) const;

  // _resolve_cluster_axis: the CUDA dim of a cluster axis (its first occurrence in the reversed
  // list of cluster names), or nullopt where JAX raises LookupError.
  std::optional<int> resolve_cluster_axis(const AxisName& name) const;
  // `[*axis_names.cluster]` as the LookupError prints it: reversed declaration order.
  std::string cluster_axes_repr() const;

  std::int64_t collective_size(std::span<const int> dims) const;
  // utils.cluster_idx(dims): the CTA's index in its collective group, visiting dims sorted.
  std::int64_t cluster_idx(std::int64_t rank, std::span<const int> dims) const;
  // utils.cluster_collective_mask(cluster, dims, leader_tracked) evaluated in CTA `rank`.
  std::uint32_t collective_mask(std::int64_t rank, std::span<const int> dims,
                                bool leader_tracked) const;

  // _axis_index_rule: lax.axis_index(name) in Pallas thread `thread` of CTA `rank`; `name` is the
  // thread axis or a plain cluster axis (the case parser guarantees it).
  std::int64_t axis_index(std::int64_t rank, std::int64_t thread, const std::string& name) const;

 private:
  const Case& c_;
  std::array<std::int64_t, 3> cuda_{1, 1, 1};
  std::int64_t num_ctas_ = 1;
  std::int64_t threads_ = 1;
  const std::string* thread_name_ = nullptr;
};

}  // namespace collfuzz::lowering
