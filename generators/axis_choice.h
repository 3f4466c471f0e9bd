// Choices of axis names made without knowing the mesh, resolved against it when the case is
// built: which cluster axes a copy is collective over (subsets, permutations, duplicates, grid,
// thread, unknown and composite names, empty versus absent), and which axes a leader-tracked copy
// names. Drawing choices instead of names keeps every generator independent of the mesh, so that
// generators are built once and a shrunk mesh keeps the rest of the case meaningful.
#pragma once

#include <cstdint>
#include <optional>

#include "generators/axis_environment.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

enum class CopyAxes : std::uint8_t {
  kAbsent,     // None: a plain copy
  kEmpty,      // ()
  kOne,        // one cluster axis (`pick` chooses which)
  kAll,        // every cluster axis, in declaration order
  kSubset,     // the cluster axes whose bit is set in `pick` (at least one)
  kReversed,   // every cluster axis, reversed
  kDuplicate,  // one cluster axis twice
  kWithGrid,   // a cluster axis and a grid axis
  kComposite,  // the first two cluster axes as one tuple name
  kThread,     // the thread axis
  kGrid,       // a grid axis
  kUnknown,    // a name the mesh does not declare
};

enum class LeaderAxes : std::uint8_t {
  kSizeTwo,  // a cluster axis of size 2 if there is one, else the first
  kOne,      // one cluster axis (`pick`)
  kAll,      // every cluster axis
  kAbsent,
  kEmpty,
  kUnknown,
  kGrid,
  kThread,
};

struct AxisChoice {
  CopyAxes copy = CopyAxes::kAbsent;  // used when the copy is not leader-tracked
  LeaderAxes leader = LeaderAxes::kSizeTwo;
  std::uint32_t pick = 0;
};

// A name no mesh that the generators build declares.
inline constexpr const char* kUnknownAxis = "unknown_axis";

std::optional<AxisNames> resolve_copy_axes(CopyAxes choice, std::uint32_t pick,
                                           const AxisEnvironment& env);
std::optional<AxisNames> resolve_leader_axes(LeaderAxes choice, std::uint32_t pick,
                                             const AxisEnvironment& env);

}  // namespace collfuzz::generators
