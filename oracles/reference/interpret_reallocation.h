// GPU interpret mode's barrier reallocation check (JAX 0.12.0.1, interpret/shared_memory.py,
// BarrierReallocationChecker): a thread that waited on a barrier must have observed all of its
// completions by the time it allocates another barrier. 0.12.0.1 checks this instead of 0.11.2's
// "every waiting thread observed every phase at the final deallocation"
// (run.barrier.dealloc_unobserved): a thread may skip a barrier's final completions when it
// allocates no barrier afterwards.
//
// As JAX keeps it: when a thread deallocates a barrier it had waited on, the barrier is noted for
// that thread; when the thread next allocates a barrier (any Barrier or ClusterBarrier allocation,
// also one that another thread of the block already created), each noted barrier is checked,
// and, if other threads still hold it, checked again when its last holder deallocates it (other
// threads may still complete phases after this one left). A violation is a run-time ValueError
// (rule run.barrier.realloc_unobserved), which the caller raises.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oracles/reference/interpret_barrier.h"

namespace collfuzz::ref {

class InterpretReallocation {
 public:
  // A barrier of one CTA: (CTA rank, allocation name, index).
  using BarrierKey = std::tuple<std::int64_t, std::string, std::int64_t>;

  struct Violation {
    std::string thread;      // the thread that allocates (and the one that had not observed)
    std::int64_t last = 0;   // its last observed phase, as the message prints it
    std::int64_t phase = 0;  // the last completed phase, as the message prints it
  };

  // `thread` deallocates barrier `key` (before the barrier's own deallocation checks).
  void on_deallocate(const std::string& thread, const BarrierKey& key, const InterpretBarrier& b) {
    if (b.observed(thread)) deallocated_[thread].push_back(key);
  }

  // `thread` allocates a barrier. `barrier(key)` returns the InterpretBarrier of a noted key and
  // `held(key)` whether some thread still holds it.
  template <class Lookup, class Held>
  std::optional<Violation> on_allocate(const std::string& thread, Lookup&& barrier, Held&& held) {
    const auto it = deallocated_.find(thread);
    if (it == deallocated_.end()) return std::nullopt;
    const std::vector<BarrierKey> keys = std::move(it->second);
    deallocated_.erase(it);
    for (const BarrierKey& key : keys) {
      if (auto v = check(barrier(key), thread)) return v;
      if (held(key)) {
        std::vector<std::string>& threads = reallocated_[key];
        if (std::find(threads.begin(), threads.end(), thread) == threads.end())
          threads.push_back(thread);
      }
    }
    return std::nullopt;
  }

  // The last holder of barrier `key` deallocated it.
  std::optional<Violation> on_final_deallocate(const BarrierKey& key, const InterpretBarrier& b) {
    const auto it = reallocated_.find(key);
    if (it == reallocated_.end()) return std::nullopt;
    const std::vector<std::string> threads = std::move(it->second);
    reallocated_.erase(it);
    for (const std::string& thread : threads) {
      if (auto v = check(b, thread)) return v;
    }
    return std::nullopt;
  }

 private:
  static std::optional<Violation> check(const InterpretBarrier& b, const std::string& thread) {
    const std::optional<std::int64_t> observed = b.observed(thread);
    if (!observed || *observed == b.phase()) return std::nullopt;
    return Violation{thread, *observed - 1, b.phase() - 1};
  }

  std::map<std::string, std::vector<BarrierKey>> deallocated_;
  std::map<BarrierKey, std::vector<std::string>> reallocated_;
};

}  // namespace collfuzz::ref
