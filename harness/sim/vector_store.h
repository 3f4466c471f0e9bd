// The simulator's vector store (plan.h VectorStoreOp): the value evaluated element by element
// from the CTA's SMEM and the inputs as they stand, stored into the output slice at once.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/vector_arith.h"
#include "harness/lowering/plan.h"
#include "harness/sim/gmem_inputs.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {

// Every CTA's SMEM by rank: a cluster_ref load (VectorNode::smem_rank) reads a peer's.
using ClusterSmem = std::vector<const SharedMemory*>;

// The registers of loop-carried values (Plan::registers), each its elements' values.
using CarryRegisters = std::vector<std::vector<VectorElement>>;

// SMEM bytes a thread's vector store wrote through the generic proxy that no commit_smem of the
// thread fenced yet: the bytes before the write, which a TMA store (the async proxy) still reads.
struct UnfencedBytes {
  std::int64_t offset = 0;
  std::vector<std::uint8_t> old;
};

// A vector store into SMEM (v.to_smem): writes the elements at v.smem_offset of `dst` (the CTA's
// own SMEM `smem`, or a peer's for a DSMEM write, VectorStoreOp::smem_rank), undefined where an
// SMEM operand is, and records the bytes it replaced in `unfenced` (its own SMEM only).
void run_vector_store_smem(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                           const SharedMemory& smem, SharedMemory& dst, const ClusterSmem& cluster,
                           const std::vector<GmemArray>& inputs, const CarryRegisters& registers,
                           std::vector<UnfencedBytes>& unfenced);

// A loop carry's init or next (v.to_register): the whole value, then the register takes it.
void run_vector_store_register(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                               const SharedMemory& smem, const ClusterSmem& cluster,
                               const std::vector<GmemArray>& inputs, CarryRegisters& registers);

// Bytes [offset, offset + n) of `smem` as a TMA store reads them: where a thread's unfenced vector
// store wrote, the bytes before its first such write. Points into `smem`, or into `scratch` when
// an unfenced write meets the range.
const std::uint8_t* async_proxy_view(const SharedMemory& smem, std::int64_t offset, std::int64_t n,
                                     const std::vector<const std::vector<UnfencedBytes>*>& threads,
                                     std::vector<std::uint8_t>& scratch);

// Writes the store's elements into `out_bytes` (packed) and marks each in `out_written`: 1 where
// defined, 0 where an SMEM operand is undefined or the result unspecified (vector_arith.h).
void run_vector_store(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                      const SharedMemory& smem, const ClusterSmem& cluster,
                      const std::vector<GmemArray>& inputs, const CarryRegisters& registers,
                      std::vector<std::uint8_t>& out_bytes, std::vector<std::uint8_t>& out_written);

}  // namespace collfuzz::sim
