// The last two stages: compiling the module for the target GPU (instructions the target lacks;
// the texts of these errors come from the CUDA toolchain and are not settled from JAX's code) and
// launching it (cuLaunchKernelEx: threads per block, grid extents, cluster size).
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/kernel_ir.h"
#include "harness/lowering/resource_estimate.h"

namespace collfuzz::lowering {

void check_compile(const Case& c, const KernelIr& ir, const Resources& rs,
                   const ClusterGeometry& geometry);
void check_launch(const Case& c, const ClusterGeometry& geometry);

}  // namespace collfuzz::lowering
