// The data a TMA transfer moves, apart from its barrier accounting (harness/sim/
// cluster_simulator.cpp): a load's box (the tensor path) or linear run (bulk and cp.async) from a
// GMEM input into one CTA's SMEM, and a store's SMEM bytes, as the async proxy sees them, into an
// output (plain, or combined by its reduction op).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/dtype.h"
#include "harness/lowering/plan.h"
#include "harness/sim/gmem_inputs.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {

// An output array as the run leaves it: its bytes, and per element whether a defined value was
// written.
struct OutputArray {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> written;  // per element
};

// The tensor path: the load's box of `src` into `smem` at the load's offset, out-of-bounds
// elements as zeros.
void write_tensor(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load);

// The bulk and cp.async paths: a linear run of `src`; what lies outside the array, or outside the
// slice's bounds, is undefined.
void write_linear(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load);

// The store `s` of `src` (its SMEM bytes as the async proxy reads them; `smem` says which are
// undefined) into `out`, an output of `dtype`.
void write_store(const SharedMemory& smem, const std::uint8_t* src, const lowering::StoreOp& s,
                 DType dtype, OutputArray& out);

}  // namespace collfuzz::sim
