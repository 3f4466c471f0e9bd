// Bug-finding power: the default campaign's loop run against the simulator with one planted bug
// (harness/lowering/mutants.h) selected, until the first disagreement the bug causes or the
// budget runs out. A case counts as a detection when the mutant simulator disagrees with the
// reference with a signature that the faithful simulator does not produce on that same case, so
// that a disagreement the simulator has anyway is never credited to a mutant. Only the mutant
// build (collfuzz_bugfind) links this.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "harness/campaign/case_shrinker.h"
#include "harness/lowering/mutants.h"

namespace collfuzz::campaign {

struct MutantHunt {
  std::string mutant;
  bool detected = false;
  double seconds_to_detection = 0;      // wall time from the start to the detecting case's verdict
  std::int64_t cases_to_detection = 0;  // cases run, the detecting one included
  std::string signature;
  std::string case_name;
  CaseSize original;
  CaseSize shrunk;
  double shrink_seconds = 0;
  std::string shrunk_case_json;
};

// Every finding one mutant causes in a budget (a signature there with the mutant and not without
// it, on the same case), with its root-cause group (root_cause.h): one bug should be one
// finding, so few groups per mutant.
struct MutantGroups {
  std::string mutant;
  std::int64_t cases = 0;
  std::map<std::string, std::string> groups;  // signature -> group
  std::size_t group_count() const;
};

MutantGroups mutant_groups(lowering::Mutant mutant, std::uint64_t seed, double budget_seconds);

MutantHunt hunt_mutant(lowering::Mutant mutant, std::uint64_t seed, double budget_seconds,
                       ShrinkLimits limits);

}  // namespace collfuzz::campaign
