#include "harness/lowering/mesh_check.h"

#include "harness/core/pyrepr.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

std::string mesh_repr(const Mesh& m) {
  const std::int64_t* threads = m.num_threads ? &*m.num_threads : nullptr;
  const std::string* thread = m.thread_name ? &*m.thread_name : nullptr;
  std::string r = "Mesh(grid=";
  r += py::tuple_of_ints(m.grid);
  r += ", grid_names=" + py::tuple_of_names(m.grid_names);
  r += ", cluster=" + py::tuple_of_ints(m.cluster);
  r += ", cluster_names=" + py::tuple_of_names(m.cluster_names);
  r += ", num_threads=" + py::optional_int(threads);
  r += ", thread_name=" + py::optional_name(thread);
  r += ", kernel_name=None)";
  return r;
}

void check_mesh(const Case& c) {
  if (c.target.entry != Entry::kKernel) return;
  const Mesh& m = c.mesh;
  const auto fail = [&](std::string_view rule, const std::string& message) {
    raise(Stage::kMesh, "ValueError", message, rule, "");
  };
  if (m.cluster.size() > 3)
    fail(rule_id::kMeshClusterRank, "cluster= must be at most 3D, got " + mesh_repr(m) + ".");
  if (m.grid_names.size() != m.grid.size()) {
    fail(rule_id::kMeshGridNames,
         "grid_names must have the same length as grid, got " + mesh_repr(m) + ".");
  }
  if (m.cluster_names.size() != m.cluster.size()) {
    fail(rule_id::kMeshClusterNames,
         "cluster_names must have the same length as cluster, got " + mesh_repr(m) + ".");
  }
  if (m.thread_name.has_value() != m.num_threads.has_value()) {
    fail(rule_id::kMeshThreadsBoth,
         "num_threads and thread_name must be either both set or both None, got " + mesh_repr(m));
  }
  constexpr std::int64_t kMaxMosaicThreads = 2048 / 128;
  if (m.num_threads && *m.num_threads > kMaxMosaicThreads) {
    fail(rule_id::kMeshThreadsMax,
         "Requested too many CUDA threads per block. Each Mosaic thread corresponds to 128 CUDA "
         "threads. At "
         "most " +
             std::to_string(kMaxMosaicThreads) + " are supported, got " + mesh_repr(m));
  }
}

}  // namespace collfuzz::lowering
