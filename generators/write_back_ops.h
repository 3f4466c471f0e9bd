// The ops of a scope's write-back: a copy_smem_to_gmem (and its reducing twin when the plan asks
// for one) with the commits and waits of its StoreSync (scope_plan.h).
#pragma once

#include <optional>

#include "generators/scope_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// A write-back's stores (the store, and its reducing twin when there is one) with the commits and
// waits of `sync`; `read_only`: its waits are wait_read_only.
Body write_back_ops(const CopySmemToGmem& store, std::optional<ReductionOp> reduce, StoreSync sync,
                    bool read_only);

}  // namespace collfuzz::generators
