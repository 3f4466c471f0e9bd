// The warp-level context in the lowering (harness/core/warp_map.h): the lowering sees the case
// expanded, so it only refuses what Mosaic GPU refuses in a warp context, before the op's own rule.
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/case_lookup.h"
#include "harness/lowering/kernel_ir.h"

namespace collfuzz::lowering {

// Raises JAX's error if `op` (of the expanded program) cannot be lowered in its warp context.
void check_warp_context(const Op& op, const CaseLookup& lookup, const Target& target);

// Under Warpgroup semantics, the dialect lowering of a warp's arrival
// (_mgpu_arrive_op_lowering_rule: arrive(arrival_count=4) on each lane, which needs Hopper); stage
// dialect, in program order.
void check_warp_arrive_dialect(const IrOp& op, const KernelIr& ir, Arch arch);

}  // namespace collfuzz::lowering
