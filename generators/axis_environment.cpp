#include "generators/axis_environment.h"

namespace collfuzz::generators {

AxisEnvironment::AxisEnvironment(const Mesh& mesh, Entry entry) {
  for (std::size_t i = 0; i < mesh.grid.size() && i < mesh.grid_names.size(); ++i) {
    grid_.push_back({mesh.grid_names[i], mesh.grid[i]});
  }
  if (entry == Entry::kPallasCall) return;
  // How many axes (cluster axes and the thread axis) a plain name denotes.
  const auto matches = [&](const std::string& name) {
    int n = mesh.thread_name && *mesh.thread_name == name ? 1 : 0;
    for (const auto& c : mesh.cluster_names) n += !c.is_tuple && c.as_plain() == name ? 1 : 0;
    return n;
  };
  for (std::size_t i = 0; i < mesh.cluster.size() && i < mesh.cluster_names.size(); ++i) {
    cluster_.push_back({mesh.cluster_names[i], mesh.cluster[i]});
    const AxisName& n = mesh.cluster_names[i];
    if (!n.is_tuple && matches(n.as_plain()) == 1) plain_cluster_.push_back(cluster_.back());
  }
  for (auto d : mesh.cluster) num_ctas_ *= d;
  thread_name_ = mesh.thread_name;
  if (mesh.thread_name && mesh.num_threads) {
    thread_ = NamedAxis{AxisName::plain(*mesh.thread_name), *mesh.num_threads};
    thread_indexable_ = matches(*mesh.thread_name) == 1;
  }
}

std::int64_t AxisEnvironment::size_of(const AxisNames& axes) const {
  std::int64_t n = 1;
  for (const AxisName& a : axes) {
    std::optional<std::int64_t> size;
    for (const auto& g : grid_) {
      if (g.name == a) size = g.size;
    }
    for (const auto& c : cluster_) {
      if (c.name == a) size = c.size;
    }
    if (thread_ && thread_->name == a) size = thread_->size;
    n *= size.value_or(1);
  }
  return n;
}

std::int64_t AxisEnvironment::cluster_size_of(const AxisNames& axes) const {
  std::int64_t n = 1;
  for (const AxisName& a : axes) {
    // _resolve_cluster_axis finds the last declaration of a repeated name first.
    for (auto it = cluster_.rbegin(); it != cluster_.rend(); ++it) {
      if (it->name == a) {
        n *= it->size;
        break;
      }
    }
  }
  return n;
}

std::vector<NamedAxis> AxisEnvironment::varying_axes() const {
  std::vector<NamedAxis> out;
  for (const auto& a : plain_cluster_) {
    if (a.size > 1) out.push_back(a);
  }
  if (thread_indexable_ && thread_->size > 1) out.push_back(*thread_);
  return out;
}

std::optional<NamedAxis> AxisEnvironment::varying_axis() const {
  for (const auto& a : plain_cluster_) {
    if (a.size > 1) return a;
  }
  if (thread_indexable_ && thread_->size > 1) return thread_;
  return std::nullopt;
}

}  // namespace collfuzz::generators
