// Copies GMEM -> SMEM: plain, multicast, PARTITIONED and REPLICATED, with their axes, element
// types, shapes, source layouts (exact, squeezed, sliced, per CTA, out of bounds), OOB modes,
// predicates, guards and barrier arguments. Mostly valid; each choice is occasionally wrong.
#pragma once

#include <rapidcheck/Gen.h>

#include "generators/copy_plan.h"

namespace collfuzz::generators {

rc::Gen<CopyPlan> copy();

// The pieces, for property tests that need one of them alone.
rc::Gen<DType> dtype();
rc::Gen<ShapeChoice> shape();
rc::Gen<AxisChoice> axis_choice();
rc::Gen<CondChoice> cond_choice();

}  // namespace collfuzz::generators
