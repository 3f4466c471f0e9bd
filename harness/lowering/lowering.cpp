// The stages in JAX's order: plgpu.Mesh, tracing, the resource estimate, the module set-up
// (lower_jaxpr_to_module, _launch), the Pallas lowering rules, verification and the dialect
// lowering, compilation, launch. Then the plan.
#include "harness/lowering/lowering.h"

#include <optional>

#include "harness/core/warp_map.h"

#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/compile_and_launch.h"
#include "harness/lowering/dialect_stage.h"
#include "harness/lowering/kernel_trace.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/lowering_rules.h"
#include "harness/lowering/mesh_check.h"
#include "harness/lowering/module_setup.h"
#include "harness/lowering/plan_builder.h"
#include "harness/lowering/resource_estimate.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

LoweringResult lower_case(const Case& original) {
  // A warp_map's body runs once per warp: lowered expanded (harness/core/warp_map.h).
  std::optional<Case> expanded;
  if (has_warp_map(original.program)) expanded = expand_warp_maps(original);
  const Case& c = expanded ? *expanded : original;
  LoweringResult result;
  try {
    check_mesh(c);
    const TracedBody kernel = trace_kernel(c);
    if (c.target.entry == Entry::kPallasCall) {
      // pallas_call.py gpu_lowering: no lowering rule is registered for plgpu.CompilerParams in
      // 0.11.2, so `assert rule is not None` fails once the traced call is lowered.
      raise(Stage::kModule, "AssertionError", "", rule_id::kPallasCall, "");
    }
    const ClusterGeometry geometry(c);
    const Resources rs = estimate_resources(c, kernel, geometry);
    const ModuleLayout layout = set_up_module(c, rs, geometry);
    KernelIr ir = lower_kernel(c, kernel, geometry, layout);
    finish_module(c, ir, geometry);
    check_compile(c, ir, rs, geometry);
    check_launch(c, geometry);
    result.plan = build_plan(c, ir, layout, geometry);
  } catch (const LoweringError& e) {
    result.diagnostic = e.diagnostic;
  }
  return result;
}

}  // namespace collfuzz::lowering
