// What the reference derives from a case's mesh: axis environment, CUDA cluster shape, the CTAs of
// the modelled cluster and their coordinates, and JAX's name lookups.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::ref {

class MeshFacts {
 public:
  explicit MeshFacts(const Case& c);

  // Pallas cluster dims padded to 3 and reversed: (x, y, z). Valid when the cluster has <= 3 dims.
  const std::array<std::int64_t, 3>& cuda_cluster() const { return cuda_cluster_; }
  std::int64_t num_ctas() const { return num_ctas_; }
  std::int64_t num_threads() const { return num_threads_; }  // Pallas threads per CTA (1 if none)
  bool multithreaded() const { return thread_name_ != nullptr; }
  const std::string* thread_name() const { return thread_name_; }

  // Index of CTA `rank` along each Pallas cluster axis (declaration order).
  const std::vector<std::int64_t>& coords(std::int64_t rank) const {
    return coords_[static_cast<std::size_t>(rank)];
  }
  // Index of CTA `rank` along CUDA dim d (0 = x).
  std::int64_t cuda_coord(std::int64_t rank, int d) const;

  // Size of `name` in the axis environment the kernel is traced in (grid, cluster, thread axes);
  // nullopt for an unbound name (JAX raises NameError).
  std::optional<std::int64_t> env_size(const AxisName& name) const;

  // `_resolve_cluster_axis`: the CUDA dim (0 = x) a cluster axis name maps to, or nullopt.
  std::optional<int> cluster_dim(const AxisName& name) const;
  // `[*axis_names.cluster]` as JAX prints it (reversed declaration order).
  std::string reversed_cluster_names_repr() const;

  // lax.axis_index(name) for CTA `rank`, Pallas thread `thread`; name is a plain cluster axis or
  // the thread axis (the parser guarantees it).
  std::int64_t axis_index(std::int64_t rank, std::int64_t thread, const std::string& name) const;

  // The mesh as `repr(plgpu.Mesh(...))` prints it.
  std::string mesh_repr() const;

 private:
  const Case& c_;
  std::array<std::int64_t, 3> cuda_cluster_{1, 1, 1};
  std::int64_t num_ctas_ = 1;
  std::int64_t num_threads_ = 1;
  const std::string* thread_name_ = nullptr;
  std::vector<std::vector<std::int64_t>> coords_;
};

}  // namespace collfuzz::ref
