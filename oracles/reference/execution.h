// Predicting what an accepted case does: every Pallas thread of every CTA runs the program under
// the canonical schedule (docs/outcome-format.md), with the byte accounting and data placement of
// each copy mode as the spec states them (spec 3.5 for the compiler, spec 4 for interpret mode).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/outcome.h"
#include "oracles/reference/checker.h"

namespace collfuzz::ref {

// An order to run the threads in other than the canonical one (interleavings.h explores them).
// The default is the canonical schedule: every thread in turn, CTA-major, each run until it
// blocks or finishes, round after round.
struct Schedule {
  // Only the threads of this CTA run (the others never start): valid where no CTA touches
  // another's barriers, so that one CTA's error may come before anything another CTA does.
  std::optional<std::int64_t> only_rank = std::nullopt;
  std::size_t rotate = 0;  // the round-robin starts at this thread (of those that run)
  // One preemption: the thread at this position (of those that run, before rotating) stops after
  // this many steps in its first turn that reaches them, and the next thread runs.
  std::optional<std::pair<std::size_t, std::size_t>> preempt = std::nullopt;
  // Step by step instead: each turn runs one step of a thread picked by this seed's random
  // sequence among those that can move.
  std::optional<std::uint64_t> random_seed = std::nullopt;
};

// May throw Rejected for a run-time diagnostic (interpret mode's callbacks). `thread_steps`, when
// given, gets the number of steps of each thread that runs (in the schedule's order before its
// rotation), before any of them runs.
Outcome execute(Checker& ck, const Schedule& schedule = {},
                std::vector<std::size_t>* thread_steps = nullptr);

// How interpret mode prints Pallas thread `t` of CTA `rank` in its messages.
inline std::string interpret_thread_repr(std::int64_t rank, std::int64_t t) {
  return "Warpgroup(device_id=0, cluster_id=0, block_id=" + std::to_string(rank) +
         ", warpgroup_id=" + std::to_string(t) + ")";
}

}  // namespace collfuzz::ref
