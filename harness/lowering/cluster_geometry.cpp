#include "harness/lowering/cluster_geometry.h"

#include <algorithm>

#include "harness/core/pyrepr.h"
#include "harness/lowering/mutants.h"

namespace collfuzz::lowering {

ClusterGeometry::ClusterGeometry(const Case& c) : c_(c) {
  const Mesh& m = c.mesh;
  // cluster = (1,) * (3 - len(cluster)) + cluster; cluster = cluster[::-1]. A pallas_call has no
  // cluster.
  const std::size_t n =
      c.target.entry == Entry::kKernel ? std::min<std::size_t>(m.cluster.size(), 3) : 0;
  for (std::size_t k = 0; k < n; ++k) cuda_[n - 1 - k] = m.cluster[k];
  num_ctas_ = cuda_[0] * cuda_[1] * cuda_[2];
  if (c.target.entry == Entry::kKernel && m.thread_name && m.num_threads) {
    thread_name_ = &*m.thread_name;
    threads_ = *m.num_threads;
  }
}

std::int64_t ClusterGeometry::cuda_coord(std::int64_t rank, int dim) const {
  switch (dim) {
    case 0:
      return rank % cuda_[0];
    case 1:
      return rank / cuda_[0] % cuda_[1];
    default:
      return rank / (cuda_[0] * cuda_[1]);
  }
}

std::vector<std::int64_t> ClusterGeometry::pallas_coords(std::int64_t rank) const {
  const std::size_t n =
      c_.target.entry == Entry::kKernel ? std::min<std::size_t>(c_.mesh.cluster.size(), 3) : 0;
  std::vector<std::int64_t> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = cuda_coord(rank, static_cast<int>(n - 1 - k));
  return out;
}

std::optional<int> ClusterGeometry::resolve_cluster_axis(const AxisName& name) const {
  if (c_.target.entry != Entry::kKernel) return std::nullopt;  // a pallas_call has no cluster axes
  const AxisNames& names = c_.mesh.cluster_names;
  for (std::size_t i = names.size(); i-- > 0;) {
    if (names[i] == name) return static_cast<int>(names.size() - 1 - i);
  }
  return std::nullopt;
}

std::string ClusterGeometry::cluster_axes_repr() const {
  if (c_.target.entry != Entry::kKernel) return "[]";
  AxisNames listed = c_.mesh.cluster_names;
  if (!mutant_active(Mutant::kUnknownAxisListNotReversed))
    std::reverse(listed.begin(), listed.end());
  return py::list_of_names(listed);
}

std::int64_t ClusterGeometry::collective_size(std::span<const int> dims) const {
  std::int64_t n = 1;
  for (int d : dims) n *= cuda_[static_cast<std::size_t>(d)];
  return n;
}

std::int64_t ClusterGeometry::cluster_idx(std::int64_t rank, std::span<const int> dims) const {
  std::vector<int> sorted(dims.begin(), dims.end());
  std::stable_sort(sorted.begin(), sorted.end());
  std::int64_t index = 0;
  std::int64_t stride = 1;
  for (int d : sorted) {
    index += cuda_coord(rank, d) * stride;
    stride *= cuda_[static_cast<std::size_t>(d)];
  }
  return index;
}

std::uint32_t ClusterGeometry::collective_mask(std::int64_t rank, std::span<const int> dims,
                                               bool leader_tracked) const {
  // get_contiguous_strides(cluster[::-1])[::-1]: x is minor.
  const std::array<std::int64_t, 3> cuda_strides{1, cuda_[0], cuda_[0] * cuda_[1]};
  const std::array<std::int64_t, 3> pallas_strides{cuda_[2] * cuda_[1], cuda_[2], 1};
  const auto& strides = mutant_active(Mutant::kMaskPallasOrder) ? pallas_strides : cuda_strides;
  std::int64_t shift = 0;
  for (int d = 0; d < 3; ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    if (cuda_[static_cast<std::size_t>(d)] != 1)
      shift += cuda_coord(rank, d) * strides[static_cast<std::size_t>(d)];
  }
  std::uint64_t unshifted = 0;
  if (leader_tracked) {
    unshifted = 1;
  } else {
    // Every index of the collective sub-grid, as np.ndindex(collective_shape) visits them.
    std::int64_t total = 1;
    for (int d : dims) total *= cuda_[static_cast<std::size_t>(d)];
    for (std::int64_t flat = 0; flat < total; ++flat) {
      std::int64_t rem = flat;
      std::int64_t bit = 0;
      for (std::size_t k = dims.size(); k-- > 0;) {
        const std::int64_t size = cuda_[static_cast<std::size_t>(dims[k])];
        bit += rem % size * strides[static_cast<std::size_t>(dims[k])];
        rem /= size;
      }
      if (bit < 64) unshifted |= std::uint64_t{1} << bit;
    }
  }
  const std::uint64_t mask = shift < 64 ? unshifted << shift : 0;
  return static_cast<std::uint32_t>(mask & 0xFFFFFFFFu);
}

std::int64_t ClusterGeometry::axis_index(std::int64_t rank, std::int64_t thread,
                                         const std::string& name) const {
  if (thread_name_ && name == *thread_name_) return thread;
  if (const auto d = resolve_cluster_axis(AxisName::plain(name))) return cuda_coord(rank, *d);
  return 0;  // a grid axis: the modelled cluster is at grid index 0
}

}  // namespace collfuzz::lowering
