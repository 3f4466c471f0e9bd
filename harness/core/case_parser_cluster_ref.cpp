// A vector load of a peer CTA's SMEM: {"load": {"alloc": A, "cluster": {axis: index}}} is
// `plgpu.cluster_ref(A, {axis: index})[...]` (docs/case-format.md, "DSMEM reads").
#include "harness/core/case_parser.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz::case_json {

void CaseParser::parse_cluster_ref(const json& j, const std::string& path,
                                   std::string& cluster_axis, DynStart& cluster_index) const {
  if (!j.is_object() || j.size() != 1) {
    throw InputError(path,
                     "expected an object with one cluster axis, as plgpu.cluster_ref's {axis: "
                     "index} (JAX lowers only one: overriding several axes is not modelled)");
  }
  const std::string& axis = j.begin().key();
  const std::string at = path + "." + axis;
  const Mesh& m = c_.mesh;
  std::optional<std::int64_t> size;
  for (std::size_t i = 0; i < m.cluster_names.size(); ++i) {
    const AxisName& n = m.cluster_names[i];
    if (!n.is_tuple && n.as_plain() == axis && i < m.cluster.size()) size = m.cluster[i];
  }
  if (!size) {
    throw InputError(at, "\"" + axis +
                             "\" is not a cluster axis of the mesh (cluster_ref takes "
                             "the cluster's own axes)");
  }
  if (m.thread_name && *m.thread_name == axis) {
    throw InputError(at, "\"" + axis +
                             "\" names the thread axis too: a cluster_ref over it is not "
                             "modelled");
  }
  cluster_axis = axis;
  const json& idx = j.begin().value();
  DynStart d;
  std::optional<std::int64_t> over = 1;  // the values the index's axis takes
  if (idx.is_number_integer()) {
    d.add = jr::integer(idx, at, 0, *size - 1);
  } else {
    jr::object(idx, at, {"axis", "mul", "add", "mod"});
    d.axis = jr::identifier(jr::required(idx, at, "axis"), at + ".axis");
    over = check_index_axis(d.axis, at + ".axis");
    if (!over) throw InputError(at + ".axis", "the axis \"" + d.axis + "\" has no size");
    if (const json* mul = jr::member(idx, "mul")) d.mul = jr::integer(*mul, at + ".mul", -64, 64);
    if (const json* add = jr::member(idx, "add")) d.add = jr::integer(*add, at + ".add", -64, 64);
    if (const json* mod = jr::member(idx, "mod")) d.mod = jr::integer(*mod, at + ".mod", 1, 64);
    for (std::int64_t a = 0; a < *over; ++a) {
      const std::int64_t x = dyn_value(d, a);
      if (x < 0 || x >= *size) {
        throw InputError(at, "at lax.axis_index(\"" + d.axis + "\") = " + std::to_string(a) +
                                 " the index is " + std::to_string(x) + ", outside the " +
                                 std::to_string(*size) + " CTAs along \"" + axis +
                                 "\" (a peer outside the cluster is not modelled)");
      }
    }
  }
  cluster_index = std::move(d);
}

}  // namespace collfuzz::case_json
