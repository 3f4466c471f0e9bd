// The slow executors' pool. Slow executors (those that sample cases: every JAX executor, cuda)
// run in their own worker processes (--slow-jobs), so the fast loop (reference vs simulator)
// never waits on them. The fast workers offer candidate cases (their index and the class of
// behaviour the reference predicts for each slow profile) to a bounded queue in shared memory;
// a full slot is overwritten and a busy one skipped, so offering never blocks. Each slow worker
// takes first the candidate whose class its executors have seen least (novelty ranking), with a
// floor of uniform random picks, and reports how many classes each executor covered.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::campaign {

// The class of behaviour the reference predicts for `c`: the profile, the outcome kind, the rule
// of a rejection, and the case's features (semantics, cluster size, thread count, the kinds of
// copy and barrier op it uses). Cases of one class exercise one path of the implementation.
std::uint64_t behaviour_class(const Case& c, const Outcome& predicted);
// The coarse part of the class: the profile, the outcome kind and the rule of a rejection. The
// pool ranks by it first (each rule, and each kind of accepted outcome, gets its turn), then by
// the class.
std::uint64_t behaviour_key(const Outcome& predicted);

// The slow executors: every JAX executor and cuda.
inline bool is_slow_executor(std::string_view name) {
  return name.substr(0, 4) == "jax-" || name == "cuda";
}

inline constexpr std::size_t kSlowQueueSlots = 1024;
inline constexpr std::size_t kSlowMaxExecutors = 8;
inline constexpr std::size_t kSlowMaxJobs = 16;

struct SlowCandidate {
  std::atomic<std::uint32_t> state{0};  // 0 empty, 1 being written, 2 full, 3 being taken
  std::uint64_t index = 0;
  std::uint64_t klass[2] = {0, 0};  // per profile (Profile::kMosaic, Profile::kInterpret)
  std::uint64_t key[2] = {0, 0};    // behaviour_key() per profile
};

// A run of a slow executor that takes this long is a stall (counted, and named on the progress
// line while it lasts).
inline constexpr double kStallSeconds = 10.0;

struct SlowWorkerStats {
  std::atomic<std::int64_t> cases{0};
  // Per executor (in the campaign's order of slow executors):
  std::atomic<std::int64_t> classes[kSlowMaxExecutors] = {};  // distinct classes run
  std::atomic<std::int64_t> runs[kSlowMaxExecutors] = {};
  std::atomic<std::int64_t> timeouts[kSlowMaxExecutors] = {};     // outcome kind timeout
  std::atomic<std::int64_t> unavailable[kSlowMaxExecutors] = {};  // did not run the case
  std::atomic<std::int64_t> crashes[kSlowMaxExecutors] = {};      // threw or crashed
  std::atomic<std::int64_t> stalls[kSlowMaxExecutors] = {};       // runs of kStallSeconds or more
  std::atomic<std::int64_t> longest_ms[kSlowMaxExecutors] = {};
  std::atomic<std::int64_t> busy_ms[kSlowMaxExecutors] = {};  // the seconds its runs took, all
  std::atomic<std::int64_t> started_ns{0};                    // when the worker started (steady ns)
  // What it is running now: executor k + 1 (0: none), the case index, since when (steady ns).
  std::atomic<std::int32_t> busy_executor{0};
  std::atomic<std::uint64_t> busy_index{0};
  std::atomic<std::int64_t> busy_since_ns{0};
};

struct SlowQueue {
  std::atomic<std::int64_t> offered{0};
  std::atomic<std::int64_t> overwritten{0};  // full slots replaced by a newer candidate
  std::atomic<std::int64_t> skipped{0};      // offers dropped on a busy slot
  std::atomic<std::int64_t> full{0};         // slots holding a candidate now
  // Cases not offered because the queue was half full (the pool had not drained it): their
  // behaviour class was never computed.
  std::atomic<std::int64_t> not_offered{0};
  SlowCandidate slots[kSlowQueueSlots];
  SlowWorkerStats workers[kSlowMaxJobs];
};

// Whether a fast worker should offer case `index` now: the offer rate follows how fast the pool
// drains the queue. While the queue is at most half full, every case offer_every() picks; beyond,
// one in 64 of those (enough to keep its candidates fresh), the rest not even classified.
bool pool_wants_offer(SlowQueue& q, std::uint64_t index);

// Offers a candidate; never waits. The slot is chosen by the index.
void offer_candidate(SlowQueue& q, std::uint64_t index, std::uint64_t mosaic_class,
                     std::uint64_t interpret_class, std::uint64_t mosaic_key = 0,
                     std::uint64_t interpret_key = 0);

struct PickedCase {
  std::uint64_t index = 0;
  std::uint64_t klass[2] = {0, 0};
  std::uint64_t key[2] = {0, 0};
  bool random = false;  // taken by the uniform floor, not by rank
};

// One slow worker's ranking: how often it ran each class, per profile.
class NoveltyPicker {
 public:
  // One pick in `random_floor` is uniform random over the queued candidates.
  NoveltyPicker(std::uint64_t seed, std::int64_t random_floor = 4)
      : rng_(seed), random_floor_(random_floor) {}

  // Takes a queued candidate (`profiles`, bit p: profile p); nullopt when the queue is empty.
  // Picks alternate between the rank by key (behaviour_key(): the least executor time spent on
  // it, then the fewest runs, then the rarest class) and the rank by class (a key never run first,
  // then the fewest runs of its class, then the key's time); one pick in `random_floor` is
  // uniform random.
  std::optional<PickedCase> pick(SlowQueue& q, unsigned profiles);
  // Records that the case was run.
  void ran(const PickedCase& c, unsigned profiles);
  // Records the executor time the case took. Keys are ranked by the time spent on them first, so
  // that each key gets an even share of a slow executor's time: a key whose cases take the whole
  // --timeout (a predicted deadlock that real JAX runs until it is killed) is not taken as often
  // as one whose cases take a second.
  void spent(const PickedCase& c, unsigned profiles, double seconds);
  std::size_t classes(Profile p) const { return seen_[static_cast<int>(p) & 1].size(); }
  std::int64_t times_seen(Profile p, std::uint64_t klass) const;
  std::int64_t key_seen(Profile p, std::uint64_t key) const;

 private:
  std::uint64_t rng_;
  std::int64_t random_floor_;
  std::int64_t picks_ = 0;
  std::map<std::uint64_t, std::int64_t> seen_[2];
  std::map<std::uint64_t, std::int64_t> keys_seen_[2];
  std::map<std::uint64_t, std::int64_t> keys_ms_[2];  // executor time spent per key
};

}  // namespace collfuzz::campaign
