// Planted bugs: named one-line behavioural changes in the lowering and the simulator, used to show
// that the oracles catch the bugs they exist to catch. A test-only seam: the hooks exist only in
// the variant of the libraries built with -DCOLLFUZZ_WITH_MUTANTS (collfuzz_lowering_mutants,
// collfuzz_sim_mutants), which only the tests link. In every other build `mutant_active` is a
// constant false and the hooks compile away, so the production binary carries none of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace collfuzz::lowering {

enum class Mutant : std::uint8_t {
  kNone,
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
  kCount
};

std::string_view mutant_name(Mutant m);
std::optional<Mutant> parse_mutant(std::string_view name);

#ifdef COLLFUZZ_WITH_MUTANTS
// The mutant selected for this thread (kNone: the faithful model).
bool mutant_active(Mutant m);
void set_active_mutant(Mutant m);
inline constexpr bool kMutantsCompiled = true;
#else
// consteval: never emitted, so no build without mutants (not even -O0) carries the seam.
consteval bool mutant_active(Mutant) { return false; }
inline constexpr bool kMutantsCompiled = false;
#endif

}  // namespace collfuzz::lowering
