// Planted bugs: named one-line behavioural changes in the lowering and the simulator (the compiler
// profile) and in the reference's interpret-profile rules, used to show that the oracles catch the
// bugs they exist to catch. A test-only seam: the hooks exist only in the variants of the
// libraries built with -DCOLLFUZZ_WITH_MUTANTS (collfuzz_lowering_mutants, collfuzz_sim_mutants,
// collfuzz_reference_mutants), which only test binaries link (cmake/sim.cmake). In every other
// build `mutant_active` is a constant false and the hooks compile away, so the production binary
// carries none of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace collfuzz {

enum class Mutant : std::uint8_t {
  kNone,
  // The lowering and the simulator (found by the reference against `sim`):
  kLeaderBytesNotDoubled,        // a leader-tracked copy arms its bytes once, not twice
  kMaskPallasOrder,              // the multicast mask linearises Pallas axes minor-first
  kChunkSplitWrongDim,           // the multicast chunk split walks the dims from the back
  kPartitionHalvesSwapped,       // PARTITIONED: CTA i loads half 1-i
  kExpectTxTruncated,            // Warpgroup: bytes % 128 != 0 still arms bytes/128 per lane
  kPredicateIgnored,             // a copy's predicate is taken as true
  kThreadAxisCheckSkipped,       // run_scoped: no thread-collective check in multithreaded kernels
  kUnknownAxisListNotReversed,   // "Unknown cluster axis": axes listed in declaration order
  kOobFillNotZero,               // the tensor map leaves out-of-bounds elements unwritten
  kNonLeaderBarrierArmed,        // a leader-tracked copy also arms the non-leader's barrier
  kMulticastSkipsSelf,           // multicast delivers to every masked CTA but the issuer
  kClusterBarrierCountOffByOne,  // ClusterBarrier count num_arrivals*(sum(sizes)-len(dims))
  kLoopIndexFrozen,              // a loop's index reads 0 on every trip (hoisted out of the loop)
  kBarrierSlotShifted,           // bars.at[i % 2] picks the next trip's barrier, (i + 1) % 2
  kStoreReductionIgnored,        // a reduction_op store lowers as a plain store (overwrites)
  kStoreWaitGroupOffByOne,       // wait_smem_to_gmem(n) lowers as wait_group n + 1
  kCommitSmemDropped,            // commit_smem (and a store's own) lowers to no proxy fence
  kWaitPhaseNotFlipped,   // a barrier_wait leaves the thread's phase bit: every wait is on parity 0
  kSwizzleLoadIgnored,    // a swizzled TMA load writes its box unswizzled (stores still swizzle)
  kIotaUncastAccepted,    // Lane lowers an iota with no layout cast as if cast to the strided one
  kCarryNextIgnored,      // a loop carry's next updates nothing: the carry keeps its init
  kNdLoopTripsRoundedUp,  // an nd_loop runs ceil(G / S) trips on every thread, not G // S + (a < G
                          // % S)
  kClusterCancelEveryCta,    // try_cluster_cancel issued by every CTA, not the first along its axes
  kClusterRefReadsOwnSmem,   // a plgpu.cluster_ref load reads the CTA's own SMEM, not the peer's
  kClusterRefWritesOwnSmem,  // a store through plgpu.cluster_ref writes the CTA's own SMEM
  kTiledVectorLoadUnswizzled,  // a vector load of a tiled, swizzled ref reads it unswizzled
  kTransposeNotInverted,       // a copy into a transposed SMEM ref permutes the GMEM slice by the
                               // permutation itself, not by its inverse
  // The reference's interpret profile (found by real JAX interpret mode, jax-interpret):
  kInterpretScopedCheckOrder,        // run_scoped: thread_axis_required checked before cluster_axes
  kInterpretPredicateAccepted,       // interpret.copy.predicate never fires
  kInterpretAxesThreadFirst,         // "not found among axes": the thread axis listed first
  kInterpretDeallocPendingOffByOne,  // a barrier leaves its scope with 1 arrival pending unflagged
  kInterpretOobFillNotZero,  // interpret copy: out-of-bounds source elements read as 1, not 0
  kCount
};

// The first interpret-profile mutant: [kFirstInterpretMutant, kCount) are the reference's.
inline constexpr Mutant kFirstInterpretMutant = Mutant::kInterpretScopedCheckOrder;
inline constexpr bool is_interpret_mutant(Mutant m) {
  return m >= kFirstInterpretMutant && m < Mutant::kCount;
}

std::string_view mutant_name(Mutant m);
std::optional<Mutant> parse_mutant(std::string_view name);

#ifdef COLLFUZZ_WITH_MUTANTS
// The mutant selected for this thread (kNone: the faithful model). A forked process keeps the
// selection of the thread that forked it.
bool mutant_active(Mutant m);
void set_active_mutant(Mutant m);
inline constexpr bool kMutantsCompiled = true;
#else
// consteval: never emitted, so no build without mutants (not even -O0) carries the seam.
consteval bool mutant_active(Mutant) { return false; }
inline constexpr bool kMutantsCompiled = false;
#endif

}  // namespace collfuzz
