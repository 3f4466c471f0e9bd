// Per executor, what the report's timeline charts per executor: the stream cases it compared with
// the reference (not unavailable, not a version mismatch) and the rules whose predicted
// diagnostics reached it. Each worker process keeps its executors' tallies in shared memory (the
// fast workers in their board slot, the slow pool's in its stats), in the order of the worker's
// executors; the supervisor sums them by name for timeline.jsonl.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace collfuzz::campaign {

struct ExecutorTally {
  std::atomic<std::int64_t> compared{0};
  std::atomic<std::uint64_t> rules_lo{0};  // bit r: a case whose predicted rule is r (r < 64)
  std::atomic<std::uint64_t> rules_hi{0};  // bit r-64
};

inline constexpr std::size_t kMaxTalliedExecutors = 16;

}  // namespace collfuzz::campaign
