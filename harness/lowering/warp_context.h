// The warp-level context in the lowering (harness/core/warp_map.h): the lowering sees the case
// expanded, so it only refuses what Mosaic GPU refuses in a warp context, before the op's own rule.
#pragma once

#include "harness/core/case.h"
#include "harness/lowering/case_lookup.h"

namespace collfuzz::lowering {

// Raises JAX's error if `op` (of the expanded program) cannot be lowered in its warp context.
void check_warp_context(const Op& op, const CaseLookup& lookup, Arch arch);

}  // namespace collfuzz::lowering
