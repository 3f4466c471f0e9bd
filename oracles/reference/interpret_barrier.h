// A barrier as GPU interpret mode keeps it (spec 4.10; JAX 0.11.2 interpret/shared_memory.py):
// one arrival per copy and per barrier_arrive, counted against num_arrivals; no byte accounting;
// and the full phase number with every thread's last observed phase, so that the interpreter can
// enforce Pallas's invariants (every completion is observed; a waiting thread waits on every
// phase). A violation is a run-time error, which the caller raises.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/mutants.h"

namespace collfuzz::ref {

class InterpretBarrier {
 public:
  struct Violation {
    enum class Kind : std::uint8_t {
      kPhase0Unobserved,
      kMissedPhase,
      kFirstWaitLate,
      kWaitLate,
      kDeallocPending,
      kDeallocUnobserved
    };
    Kind kind;
    std::string thread;      // the thread named in the message
    std::int64_t last = 0;   // its last observed phase (as the message prints it)
    std::int64_t phase = 0;  // the phase number the message prints
    std::int64_t extra = 0;  // missed phase / next phase / pending arrivals
  };

  explicit InterpretBarrier(std::int64_t num_arrivals = 1) : num_arrivals_(num_arrivals) {}

  std::int64_t num_arrivals() const { return num_arrivals_; }
  std::int64_t arrivals_count() const { return arrivals_count_; }
  std::int64_t phase() const { return phase_; }
  // The phase after the last one `thread` observed (the dict's value), if it ever waited.
  std::optional<std::int64_t> observed(const std::string& thread) const {
    for (const auto& [t, last] : observed_) {
      if (t == thread) return last;
    }
    return std::nullopt;
  }

  // One arrival from `thread`; returns whether it completed a phase, or a violation.
  std::optional<Violation> arrive(bool& completed) {
    completed = false;
    if (++arrivals_count_ != num_arrivals_) return std::nullopt;
    completed = true;
    ++phase_;
    arrivals_count_ = 0;
    if (phase_ == 2 && observed_.empty())
      return Violation{Violation::Kind::kPhase0Unobserved, "", 0, 0, 0};
    for (const auto& [t, last] : observed_) {
      if (last < phase_ - 2)
        return Violation{Violation::Kind::kMissedPhase, t, last, phase_ - 1, last + 1};
    }
    return std::nullopt;
  }

  // A wait by `thread`: nullopt and `passed` false while it must keep waiting. `resumed`: the
  // thread is already waiting (an earlier call left `passed` false). JAX checks a wait's invariants
  // once, on entry to Barrier._wait; a waiter then sleeps in cv.wait() with the phase it read and
  // wakes to pass however many phases completed meanwhile ("This is fine: if it caused us to miss
  // a phase we'll catch it the next time we wait or on deallocation"), so a resumed wait raises
  // nothing. Its thread's entry is unchanged while it sleeps: only the thread itself writes it.
  std::optional<Violation> wait(const std::string& thread, bool& passed, std::int64_t& waited_phase,
                                bool resumed = false) {
    passed = false;
    std::int64_t last = 0;
    bool known = false;
    for (const auto& [t, l] : observed_) {
      if (t == thread) {
        last = l;
        known = true;
      }
    }
    if (!resumed && !known && phase_ > 1)
      return Violation{Violation::Kind::kFirstWaitLate, thread, 0, phase_, 0};
    waited_phase = last;
    if (!resumed && last <= phase_ - 2)
      return Violation{Violation::Kind::kWaitLate, thread, last, phase_, last + 1};
    if (last == phase_) return std::nullopt;  // phase `last` has not completed yet
    passed = true;
    if (known) {
      for (auto& [t, l] : observed_) {
        if (t == thread) l = last + 1;
      }
    } else {
      observed_.emplace_back(thread, last + 1);
    }
    return std::nullopt;
  }

  std::optional<Violation> deallocate() const {
    if (arrivals_count_ > (mutant_active(Mutant::kInterpretDeallocPendingOffByOne) ? 1 : 0))
      return Violation{Violation::Kind::kDeallocPending, "", 0, 0, arrivals_count_};
    for (const auto& [t, last] : observed_) {
      if (last != phase_)
        return Violation{Violation::Kind::kDeallocUnobserved, t, last - 1, phase_ - 1, 0};
    }
    return std::nullopt;
  }

 private:
  std::int64_t num_arrivals_;
  std::int64_t arrivals_count_ = 0;
  std::int64_t phase_ = 0;                                      // the next phase to complete
  std::vector<std::pair<std::string, std::int64_t>> observed_;  // insertion order, as a dict
};

}  // namespace collfuzz::ref
