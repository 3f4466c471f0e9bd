// run_scoped blocks: their collective axes, the copies on their barrier, who issues them, the
// arrivals and waits, cluster barriers, allocations of every other kind, and nested scopes.
#pragma once

#include <rapidcheck/Gen.h>

#include "generators/scope_plan.h"

namespace collfuzz::generators {

// A scope with up to `depth` levels of nested scopes inside it.
rc::Gen<ScopePlan> scope(int depth);

// A whole kernel body: one to three sibling scopes.
rc::Gen<ProgramPlan> program();

}  // namespace collfuzz::generators
