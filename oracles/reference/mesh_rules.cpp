// Rule family: plgpu.Mesh construction (spec 1.1).
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_mesh(Checker& ck) {
  if (ck.c.target.entry == Entry::kPallasCall) return;  // no plgpu.Mesh is built
  const Mesh& m = ck.c.mesh;
  const auto repr = [&] { return Holes{{"mesh", ck.mesh.mesh_repr()}}; };
  ck.check(RuleId::kMeshClusterRank, m.cluster.size() > 3, "mesh", repr);
  ck.check(RuleId::kMeshGridNames, m.grid_names.size() != m.grid.size(), "mesh", repr);
  ck.check(RuleId::kMeshClusterNames, m.cluster_names.size() != m.cluster.size(), "mesh", repr);
  ck.check(RuleId::kMeshThreadsBoth, m.thread_name.has_value() != m.num_threads.has_value(), "mesh",
           repr);
  ck.check(RuleId::kMeshThreadsMax, m.num_threads && *m.num_threads > 16, "mesh", repr);
}

}  // namespace collfuzz::ref
