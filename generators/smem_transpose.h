// A copy destination seen through `ref.transpose(permutation)`: the permutation a plan's
// TransposeChoice gives it (copy_plan.h).
#pragma once

#include <optional>

#include "generators/copy_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// The permutation a plan's TransposeChoice gives a destination of dst's rank, with the plan's
// spelling; nullopt where it is the identity (rank 2 for kLeading, rank 1) or kNone.
std::optional<SmemTranspose> transpose_for(const CopyPlan& plan, const Shape& dst);

}  // namespace collfuzz::generators
