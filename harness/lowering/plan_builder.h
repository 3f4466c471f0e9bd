// Running the compiled kernel's control flow for every CTA and Pallas thread of the modelled
// cluster: `when` guards, copy predicates, cluster_idx, multicast masks, dynamic slice starts and
// per-thread barrier parities are evaluated, and each thread's straight-line list of
// hardware-level steps is written into the plan.
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/kernel_ir.h"
#include "harness/lowering/module_setup.h"
#include "harness/lowering/plan.h"

namespace collfuzz::lowering {

Plan build_plan(const Case& c, const KernelIr& ir, const ModuleLayout& layout,
                const ClusterGeometry& geometry);

}  // namespace collfuzz::lowering
