#include "oracles/reference/mesh_facts.h"

#include "harness/core/pyrepr.h"

namespace collfuzz::ref {

MeshFacts::MeshFacts(const Case& c) : c_(c) {
  const Mesh& m = c.mesh;
  if (m.thread_name && m.num_threads) {
    thread_name_ = &*m.thread_name;
    num_threads_ = *m.num_threads;
  }
  const std::size_t rank = m.cluster.size();
  for (std::size_t k = 0; k < rank && k < 3; ++k) {
    // Pallas axis k of `rank` is CUDA dim rank-1-k: the last name is x.
    cuda_cluster_[rank - 1 - k] = m.cluster[k];
  }
  for (auto d : m.cluster) num_ctas_ *= d;
  coords_.resize(static_cast<std::size_t>(num_ctas_));
  for (std::int64_t r = 0; r < num_ctas_; ++r) {
    std::vector<std::int64_t> co(rank, 0);
    std::int64_t rem = r;
    for (std::size_t k = rank; k-- > 0;) {
      co[k] = rem % m.cluster[k];
      rem /= m.cluster[k];
    }
    coords_[static_cast<std::size_t>(r)] = std::move(co);
  }
}

std::int64_t MeshFacts::cuda_coord(std::int64_t rank, int d) const {
  const auto& co = coords(rank);
  const int n = static_cast<int>(co.size());
  return d < n ? co[static_cast<std::size_t>(n - 1 - d)] : 0;
}

std::optional<std::int64_t> MeshFacts::env_size(const AxisName& name) const {
  // jax_core.extend_axis_env_nd(mesh.shape.items()): an ordered dict, so a repeated name keeps
  // the size of its last occurrence.
  const Mesh& m = c_.mesh;
  std::optional<std::int64_t> size;
  for (std::size_t i = 0; i < m.grid_names.size() && i < m.grid.size(); ++i) {
    if (m.grid_names[i] == name) size = m.grid[i];
  }
  for (std::size_t i = 0; i < m.cluster_names.size() && i < m.cluster.size(); ++i) {
    if (m.cluster_names[i] == name) size = m.cluster[i];
  }
  if (thread_name_ && !name.is_tuple && name.as_plain() == *thread_name_) size = num_threads_;
  return size;
}

std::optional<int> MeshFacts::cluster_dim(const AxisName& name) const {
  // axis_names.reverse().cluster.index(name): the first match in reversed order.
  const auto& names = c_.mesh.cluster_names;
  for (std::size_t i = names.size(); i-- > 0;) {
    if (names[i] == name) return static_cast<int>(names.size() - 1 - i);
  }
  return std::nullopt;
}

std::string MeshFacts::reversed_cluster_names_repr() const {
  AxisNames rev(c_.mesh.cluster_names.rbegin(), c_.mesh.cluster_names.rend());
  return py::list_of_names(rev);
}

std::int64_t MeshFacts::axis_index(std::int64_t rank, std::int64_t thread,
                                   const std::string& name) const {
  if (thread_name_ && name == *thread_name_) return thread;
  const auto& names = c_.mesh.cluster_names;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (!names[k].is_tuple && names[k].as_plain() == name) return coords(rank)[k];
  }
  return 0;
}

std::string MeshFacts::mesh_repr() const {
  const Mesh& m = c_.mesh;
  const std::int64_t* nt = m.num_threads ? &*m.num_threads : nullptr;
  const std::string* tn = m.thread_name ? &*m.thread_name : nullptr;
  return "Mesh(grid=" + py::tuple_of_ints(m.grid) +
         ", grid_names=" + py::tuple_of_names(m.grid_names) +
         ", cluster=" + py::tuple_of_ints(m.cluster) +
         ", cluster_names=" + py::tuple_of_names(m.cluster_names) +
         ", num_threads=" + py::optional_int(nt) + ", thread_name=" + py::optional_name(tn) +
         ", kernel_name=None)";
}

}  // namespace collfuzz::ref
