// Whether a warp_map's warps, running concurrently, can complete an mbarrier phase with a
// no-complete arrival (PTX mbarrier.arrive.noComplete: undefined behaviour; undefined_behaviour.def
// run.mbarrier.nocomplete_completes). A pure search shared by the reference and the simulator, as
// harness/core/vector_arith.h is: each decides on its own which arrivals a warp makes and what is
// pending.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace collfuzz {

// One arrival of a warp on the barrier, in hardware arrivals: a copy's no-complete arrival (3 per
// lane, 96 per warp) and then its arrive_expect_tx (32), or a barrier_arrive (4 per lane, 128).
// `tag` is the caller's (the op that arrives).
struct WarpArrival {
  std::int64_t hardware = 0;
  bool no_complete = false;
  std::int32_t tag = -1;
};

struct NoCompleteHit {
  std::size_t warp = 0;     // whose no-complete arrival completes the phase
  std::size_t arrival = 0;  // its index in that warp's list
  std::int64_t before = 0;  // the hardware arrivals of the phase before it, in that order
};

// `warps`: each warp's arrivals in its program order. Searches every interleaving (each warp's
// own in order; a copy's bytes landing whenever they may) for one in which a no-complete arrival
// brings the `pending` hardware arrivals of the phase open at the start to zero or below while no
// bytes are in flight: prefixes of the warps' lists summing to S < pending, and a warp whose next
// arrival is a no-complete one with S + its count >= pending. The first such, by warp and then
// arrival, or nullopt. Only that phase is searched.
std::optional<NoCompleteHit> no_complete_completion(
    const std::vector<std::vector<WarpArrival>>& warps, std::int64_t pending);

}  // namespace collfuzz
