// The simulator's vector store (plan.h VectorStoreOp): the value evaluated element by element
// from the CTA's SMEM and the inputs as they stand, stored into the output slice at once.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/lowering/plan.h"
#include "harness/sim/gmem_inputs.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {

// Writes the store's elements into `out_bytes` (packed) and marks each in `out_written`: 1 where
// defined, 0 where an SMEM operand is undefined or the result unspecified (vector_arith.h).
void run_vector_store(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                      const SharedMemory& smem, const std::vector<GmemArray>& inputs,
                      std::vector<std::uint8_t>& out_bytes, std::vector<std::uint8_t>& out_written);

}  // namespace collfuzz::sim
