// Shrinking a finding to a minimal case that keeps its signature: fewest ops, fewest CTAs,
// smallest dims, then the simplest remaining choices. Two stages: first RapidCheck's shrink tree
// of the generated case (which stays among the cases the generators build), then structural
// passes over the case itself (delete ops, unwrap guards, drop allocations, shrink the mesh,
// halve dims consistently across arrays). Every candidate is re-parsed, so each is a valid case.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include <rapidcheck/Shrinkable.h>

#include "harness/core/case.h"

namespace collfuzz::campaign {

struct ShrinkLimits {
  std::int64_t max_candidates = 4000;
  std::chrono::milliseconds max_time{20000};
};

struct ShrinkStats {
  std::int64_t candidates = 0;  // candidates tried
  std::int64_t accepted = 0;    // candidates that kept the property
};

// The size measures of a case that shrinking minimises, and that reports print.
struct CaseSize {
  std::int64_t ops = 0;
  std::int64_t ctas = 1;
  std::int64_t elements = 0;  // of every input, output and SMEM allocation
};
CaseSize case_size(const Case& c);

class CaseShrinker {
 public:
  // `keeps(candidate)` says whether a candidate still shows the finding.
  CaseShrinker(std::function<bool(const Case&)> keeps, ShrinkLimits limits = {});

  // Walks RapidCheck's shrink tree from `start` (greedy: the first shrink that keeps the finding
  // is taken), then shrinks structurally.
  Case shrink(const rc::Shrinkable<Case>& start);
  // Structural shrinking only (a finding read from a file).
  Case shrink(Case start);

  const ShrinkStats& stats() const { return stats_; }

 private:
  std::function<bool(const Case&)> keeps_;
  ShrinkLimits limits_;
  ShrinkStats stats_;
  std::chrono::steady_clock::time_point deadline_;

  bool out_of_budget() const;
  // Normalises a candidate by a JSON round trip; nullopt when it is not a valid case.
  std::optional<Case> valid(const Case& candidate) const;
  bool try_candidate(Case& current, const Case& candidate);
  bool pass(Case& current, const std::function<std::vector<Case>(const Case&)>& candidates);
  Case structural(Case start);
};

}  // namespace collfuzz::campaign
