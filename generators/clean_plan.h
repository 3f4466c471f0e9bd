// Clean cases: about half of the generated cases are meant to be accepted, so that the executors
// run kernels and not only diagnostics. A clean case keeps every choice that JAX accepts (the
// copy mode, axes that name cluster axes, shapes, layouts, predicates, OOB modes, waits) and
// drops the deliberate mistakes (wrong names, wrong arrival counts, other allocation kinds,
// mismatched shapes and dtypes); program_builder also aligns a clean copy's bytes to the rules
// (16-byte minor dims, 256-element boxes, 128-byte Lane copies).
#pragma once

#include "generators/scope_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

Target clean_target(Target t);
CopyPlan clean_copy(CopyPlan p);
ScopePlan clean_scope(ScopePlan p);

}  // namespace collfuzz::generators
