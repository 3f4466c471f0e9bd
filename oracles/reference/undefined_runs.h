// Undefined behaviour the reference predicts (harness/core/undefined_behaviour.def: the run.* ids):
// the case passes every rule of the compiler profile, but running it does something the PTX ISA
// leaves undefined. The execution throws UndefinedRun where it first happens; the driver
// (reference.cpp) turns it into an outcome of kind "undefined" with the code, the op and the CTA.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/no_complete_search.h"
#include "harness/core/outcome.h"

namespace collfuzz::ref {

struct UndefinedRun {
  UndefinedRecord record;
};

// run.multicast.outside_cluster: the CTAs a multicast from `issuer` at `op` reaches (the bits of
// its 16-bit ctaMask, copy_facts.h multicast_targets) must all be CTAs of the cluster. A bit at
// or past `num_ctas` (and below 16: higher bits do not survive JAX's trunci to i16) names no CTA.
void check_multicast_in_cluster(const std::vector<std::int64_t>& targets, std::int64_t num_ctas,
                                const std::string& op, std::int64_t issuer);
// run.cluster_barrier.arrival_outside_cluster: the same for the CTAs a ClusterBarrier arrival
// signals (CollectiveBarrierRef.arrive: one lane per rank 0..15 of the mask, mapa to that rank).
void check_cluster_arrival_in_cluster(const std::vector<std::int64_t>& targets,
                                      std::int64_t num_ctas, const std::string& op,
                                      std::int64_t issuer);

// The count mbarrier.init receives for allocation `a`, whose count in reported units is `count`
// (execution.cpp barrier_count): a Barrier's lanes are 128 hardware arrivals each, unless it orders
// the tensor core; a ClusterBarrier's count is already in hardware arrivals.
std::int64_t mbarrier_init_count(const Alloc& a, std::int64_t count);
// run.mbarrier.init_count: the count must be in [1, 2^20 - 1]. Every CTA initialises every
// mbarrier at kernel start, so the run meets it before any op (reported on CTA 0).
void check_mbarrier_count(std::int64_t hardware_count, const std::string& alloc);

// run.mbarrier.nocomplete_completes: throws when some order of a warp_map's warps makes a
// no-complete arrival complete the phase of `barrier` (harness/core/no_complete_search.h), whose
// `pending` hardware arrivals are those at the warp_map's entry; `ops` names the ops by the
// arrivals' tags. `also`: the other undefined behaviour of the warp_map's ops, which a run whose
// warps go in another order meets first (UndefinedRecord::also).
void check_warp_no_complete(const std::vector<std::vector<WarpArrival>>& warps,
                            std::int64_t pending, const std::vector<const std::string*>& ops,
                            const std::string& barrier, std::int64_t issuer,
                            const std::function<std::vector<UndefinedBehaviour>()>& also = {});

// The prediction for a run that meets `u`.
Outcome undefined_outcome(const UndefinedRun& u, Profile profile);

}  // namespace collfuzz::ref
