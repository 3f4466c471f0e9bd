// The facts of the lowering and the simulator that depend on the JAX release (target.jax): one
// flag per behaviour change, keyed by version in one place. The reference checker states the
// same changes as since/until rows of oracles/reference/rules.def; docs/rules.md lists them.
#pragma once

#include "harness/core/jax_version.h"

namespace collfuzz::lowering {

struct JaxFacts {
  // copy_gmem_to_smem, leader-tracked: the collective axis must be CUDA x (the last cluster
  // name) with size 2 (0.11.2: the whole cluster has 2 CTAs), with a new message.
  bool leader_on_last_axis_size_2 = false;
  // _prepare_async_copy checks any leader-tracked copy (PARTITIONED or REPLICATED) for a
  // collective first ("... can be leader-tracked"), and finds the partitioned dim only when the
  // collective size exceeds 1 (0.11.2: partitioned dim first, then "... can be partitioned").
  bool leader_not_collective_first = false;
  // _prepare_tma checks the 16-byte GMEM strides after the rank and the multicast split, with a
  // new message; a rank-0 slice has a minor dim of 1 (0.11.2: IndexError).
  bool strides_checked_after_split = false;
  // _lower_as_gpu_kernel reserves one CTA barrier per warpgroup and one CTA-wide of 16.
  bool cta_barrier_budget = false;
  // The compiler predicates the barrier's arrive.expect_tx with the copy's predicate: a copy
  // with predicate=False does not arrive (0.11.2: it arrives expecting 0 bytes). Lane and
  // Warpgroup semantics both.
  bool predicate_gates_arrive = false;
  // A copy onto an orders_tensor_core barrier arms it from one lane with the whole byte count
  // (arrive_expect_tx with single_lane_predicate and a tensor-core order scope), in Lane and
  // Warpgroup semantics, and Lane semantics no longer require the byte count to be a multiple of
  // 128 for such a copy (0.11.2: every lane arrives with bytes/128, or a Warpgroup select).
  bool orders_tc_single_lane_arrive = false;
  // plgpu.barrier_arrive_and_wait exists (new in 0.12.0.1; 0.11.2's module has no such attribute).
  bool has_barrier_arrive_and_wait = false;
  // A vector store of constants lays its splat out with vec_size gcd(64 // bits, n // 128)
  // (0.11.2: 64 // bits, or 1 under 64 // bits * 128 elements, which raises ValueError((layout,
  // 128)) where it does not divide n: rule lower.vector.splat_vec_size).
  bool splat_vec_size_gcd = false;
  // Warpgroup's layout inference finds no candidate tiling for a copy through a slice of an SMEM
  // ref when it diagnoses a failed divisibility, and so raises its generic message (0.11.2:
  // "You need to prove the divisibility of index i ..." or its assertion, as for a whole ref).
  bool sliced_ref_no_culprit = false;
  // Warpgroup's dialect lowering loads a peer CTA's SMEM through an indexed ref (a cluster_ref of
  // `smem.at[k]`) (0.11.2: the vector.load expects the strided type with a dynamic offset that
  // the cluster ref's result lacks, ValueError "Expected type memref<...> for value OpResult(...").
  bool indexed_cluster_ref_loads = false;
  // A WGMMA-layout value moved to or from GMEM plans its transfer (fragmented_array.
  // plan_gmem_transfer, TransferPlanDerivationError); 0.11.2 plans nothing, and Warpgroup's
  // dialect lowering of a GMEM load in that layout raises "Only optimized transfers to SMEM
  // supported".
  bool gmem_transfer_plan = false;
};

constexpr JaxFacts jax_facts(JaxVersion v) {
  JaxFacts f;
  if (v >= JaxVersion::k0_12_0_1) {
    f.leader_on_last_axis_size_2 = true;
    f.leader_not_collective_first = true;
    f.strides_checked_after_split = true;
    f.cta_barrier_budget = true;
    f.predicate_gates_arrive = true;
    f.orders_tc_single_lane_arrive = true;
    f.has_barrier_arrive_and_wait = true;
    f.splat_vec_size_gcd = true;
    f.sliced_ref_no_culprit = true;
    f.indexed_cluster_ref_loads = true;
    f.gmem_transfer_plan = true;
  }
  return f;
}

}  // namespace collfuzz::lowering
