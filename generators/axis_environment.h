// What a generator needs to know about a mesh to refer to its axes: the cluster axes with their
// sizes, the thread axis, the grid axes, and the size of a set of axes as JAX looks it up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::generators {

struct NamedAxis {
  AxisName name;
  std::int64_t size = 1;
};

class AxisEnvironment {
 public:
  AxisEnvironment(const Mesh& mesh, Entry entry);

  const std::vector<NamedAxis>& cluster() const { return cluster_; }
  const std::vector<NamedAxis>& grid() const { return grid_; }
  // Plain (non-tuple) cluster axes that name exactly one axis of the mesh: the ones conditions
  // and dynamic indices may name.
  const std::vector<NamedAxis>& plain_cluster() const { return plain_cluster_; }
  // Whether conditions may name the thread axis (it exists and no cluster axis shares its name).
  bool thread_indexable() const { return thread_indexable_; }
  // The thread axis when the mesh is multithreaded (thread_name and num_threads both set).
  const std::optional<NamedAxis>& thread() const { return thread_; }
  // The thread name, set or not together with num_threads.
  const std::optional<std::string>& thread_name() const { return thread_name_; }
  std::int64_t num_threads() const { return thread_ ? thread_->size : 1; }
  std::int64_t num_ctas() const { return num_ctas_; }

  // The product of the sizes of `axes` in the axis environment (grid, cluster and thread axes;
  // the last declaration of a repeated name wins); an unbound name counts as 1.
  std::int64_t size_of(const AxisNames& axes) const;
  // The product over cluster axes only (what a copy's collective size is when every name
  // resolves); names that are not cluster axes count as 1.
  std::int64_t cluster_size_of(const AxisNames& axes) const;
  // An indexable plain cluster axis of size > 1 (the first), else the thread axis if it is
  // indexable and has size > 1.
  std::optional<NamedAxis> varying_axis() const;
  // Every axis varying_axis() may give: the plain cluster axes of size > 1, then the thread axis.
  std::vector<NamedAxis> varying_axes() const;

 private:
  std::vector<NamedAxis> cluster_;
  std::vector<NamedAxis> grid_;
  std::vector<NamedAxis> plain_cluster_;
  std::optional<NamedAxis> thread_;
  std::optional<std::string> thread_name_;
  bool thread_indexable_ = false;
  std::int64_t num_ctas_ = 1;
};

}  // namespace collfuzz::generators
