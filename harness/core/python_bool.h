// A condition's value as Python computes it while tracing: `pl.when(False)` takes a Python bool
// and never traces its body, `all`/`any`/`not` of Python bools fold to a bool, and anything built
// on an axis index (lax.axis_index, or a warp index bound by warp_map's expansion) is traced.
// One definition for every layer that decides what JAX traces: pallas_call's DCE, the lowering's
// trace, the reference's program walk.
#pragma once

#include <optional>

#include "harness/core/case.h"

namespace collfuzz {

// The bool Python holds for `c`, or nullopt when `c` is traced.
std::optional<bool> python_bool(const Cond& c);

}  // namespace collfuzz
