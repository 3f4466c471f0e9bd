// What happens to the module after every Pallas lowering rule ran: _lower_as_gpu_kernel verifies
// it (under Warpgroup semantics the async_load ops' verifier rejects duplicate collective dims),
// lower_mgpu_module lowers the Mosaic GPU dialect (Warpgroup: each async_load / async_store now
// calls LaunchContext.async_copy, in program order), and Scratch.finalize_size runs the host-side
// initialisation of every TMA descriptor, which rejects a GMEM view whose minor stride is not 1
// (reported at stage `module`, the stage the JAX executor gives errors raised there).
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/kernel_ir.h"

namespace collfuzz::lowering {

void finish_module(const Case& c, KernelIr& ir, const ClusterGeometry& geometry);

}  // namespace collfuzz::lowering
