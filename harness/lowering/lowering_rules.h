// The Pallas Mosaic GPU lowering rules, in program order (lowering.py _run_scoped_lowering_rule,
// primitives.py _copy_gmem_to_smem_lowering, _copy_smem_to_gmem_lowering, _barrier_arrive_lowering,
// _barrier_wait_lowering, the cond rule), starting with the run_scoped plgpu.kernel wraps the body
// in. ModuleContext's state is modelled: the SMEM stack (scratch_view) and the per-key pools of
// initialised barrier groups (reserve_barrier pops the last one and puts it back on exit).
// Under Lane semantics the copies call LaunchContext.async_copy here; under Warpgroup they emit
// dialect ops whose lowering comes later (dialect_stage.h). Raises the lower-stage diagnostics.
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/kernel_ir.h"
#include "harness/lowering/kernel_trace.h"
#include "harness/lowering/module_setup.h"

namespace collfuzz::lowering {

// How the Pallas rules call LaunchContext.async_copy for a load and for a store.
AsyncCopyRequest load_request(const Case& c, const IrCopy& copy, Stage stage);
AsyncCopyRequest store_request(const Case& c, const IrStore& store, Stage stage);

KernelIr lower_kernel(const Case& c, const TracedBody& kernel, const ClusterGeometry& geometry,
                      const ModuleLayout& layout);

}  // namespace collfuzz::lowering
