// The case reader: `plgpu.try_cluster_cancel` (docs/case-format.md, "try_cluster_cancel"),
// cluster launch control: a 16-byte response requested from the grid's scheduler, delivered to
// every CTA of the cluster with a complete_tx on each one's barrier.

#include "harness/core/case_parser.h"
#include "harness/core/json_reader.h"

namespace collfuzz::case_json {

TryClusterCancel CaseParser::parse_try_cluster_cancel(const json& j, const std::string& path) {
  jr::object(j, path, {"op", "result", "barrier", "collective_axes"});
  if (c_.target.arch == Arch::kSm80) {
    throw InputError(path + ".op",
                     "try_cluster_cancel on sm_80 is not modelled (cluster launch control is "
                     "PTX for sm_100 and later; sm_90a and sm_100a are)");
  }
  TryClusterCancel tc;
  const std::string result_path = path + ".result";
  const json& result = jr::required(j, path, "result");
  jr::object(result, result_path, {"alloc", "index"});
  tc.result = jr::identifier(jr::required(result, result_path, "alloc"), result_path + ".alloc");
  const Alloc* a = lookup_alloc(tc.result, result_path + ".alloc");
  if (a->kind != AllocKind::kSmem) {
    throw InputError(result_path + ".alloc", "\"" + tc.result + "\" is a " + to_string(a->kind) +
                                                 " allocation; the response goes to an SMEM one");
  }
  if (a->transforms.any()) {
    throw InputError(result_path + ".alloc",
                     "a transformed (tiled or swizzled) result ref is not modelled");
  }
  // `res.at[k]` of plgpu.TryClusterCancelResult(n): leading integer indices only.
  parse_smem_index(jr::member(result, "index"), result_path + ".index", *a, tc.result_index);
  tc.barrier = parse_barrier_use(jr::required(j, path, "barrier"), path + ".barrier", true);
  const Alloc* bar = lookup_alloc(tc.barrier.alloc, path + ".barrier.alloc");
  if (!tc.barrier.index && bar->num_barriers != 1) {
    throw InputError(path + ".barrier",
                     "\"" + tc.barrier.alloc + "\" holds " + std::to_string(bar->num_barriers) +
                         " barriers; index one (bars.at[i]): a group is not modelled here");
  }
  if (bar->orders_tensor_core) {
    throw InputError(path + ".barrier.alloc",
                     "try_cluster_cancel on an orders_tensor_core barrier is not modelled");
  }
  if (const json* axes = jr::member(j, "collective_axes")) {
    const std::string axes_path = path + ".collective_axes";
    if (axes->is_string()) {
      tc.collective_axes.push_back(jr::identifier(*axes, axes_path));
    } else {
      jr::array(*axes, axes_path, 8);
      for (std::size_t i = 0; i < axes->size(); ++i)
        tc.collective_axes.push_back(jr::identifier((*axes)[i], jr::index_path(axes_path, i)));
    }
    for (std::size_t i = 0; i < tc.collective_axes.size(); ++i) {
      const std::string at = axes->is_string() ? axes_path : jr::index_path(axes_path, i);
      check_index_axis(tc.collective_axes[i], at);
      for (std::size_t k = 0; k < i; ++k) {
        if (tc.collective_axes[k] == tc.collective_axes[i])
          throw InputError(at, "\"" + tc.collective_axes[i] + "\" is named twice");
      }
    }
  }
  return tc;
}

}  // namespace collfuzz::case_json
