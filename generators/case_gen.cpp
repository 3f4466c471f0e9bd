#include "generators/case_gen.h"

#include <rapidcheck.h>

#include "generators/clean_plan.h"
#include "generators/mesh_gen.h"
#include "generators/program_builder.h"
#include "generators/scope_gen.h"
#include "generators/target_gen.h"
#include "generators/weighted.h"
#include "harness/core/scratch_shapes.h"

namespace collfuzz::generators {

namespace {

// A share of the cases whose program is one run_scoped with the axes JAX gives scratch shapes are
// written with `scratch_shapes` (harness/core/scratch_shapes.h): those whose scope holds an even
// number of allocations. The choice draws nothing, so the case stream is otherwise unchanged.
void use_scratch_shapes(Case& c) {
  if (c.program.size() != 1) return;
  auto* rs = std::get_if<RunScoped>(&c.program.front().v);
  if (!rs || rs->allocs.empty() || rs->allocs.size() % 2 != 0 ||
      rs->collective_axes != scratch_shapes_axes(c))
    return;
  rs->scratch_shapes = true;
}

}  // namespace

rc::Gen<Case> any_case() {
  // About half of the cases are clean (meant to be accepted), the others keep every mistake
  // drawn; shrinking goes towards clean.
  const auto clean = weighted_element<bool>({{55, true}, {45, false}});
  return rc::gen::map(
      rc::gen::tuple(clean, mesh_choice(), target(), program()),
      [](const std::tuple<bool, MeshChoice, Target, ProgramPlan>& t) {
        const bool is_clean = std::get<0>(t);
        Mesh m = build_mesh(std::get<1>(t), is_clean);
        const Target target = is_clean ? clean_target(std::get<2>(t)) : std::get<2>(t);
        if (is_clean && target.arch == Arch::kSm80) {
          for (auto& d : m.cluster) d = 1;  // pre-Hopper GPUs have no clusters
        }
        if (target.entry == Entry::kPallasCall) {
          // pl.pallas_call has no mesh: a grid without axis names, no cluster and
          // no thread axis.
          m.grid_names.clear();
          m.cluster.clear();
          m.cluster_names.clear();
          m.num_threads.reset();
          m.thread_name.reset();
        }
        Case c = ProgramBuilder(std::move(m), target, is_clean).build(std::get<3>(t), "generated");
        use_scratch_shapes(c);
        return c;
      });
}

}  // namespace collfuzz::generators
