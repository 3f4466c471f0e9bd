// Conditions chosen without knowing the mesh (`pl.when` guards that make only some CTAs or
// threads issue, and copy predicates), resolved against it when the case is built: an atom
// compares the index along an axis that the case can name with a value relative to its size.
#pragma once

#include <cstdint>

#include "generators/axis_environment.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// The comparison of an atom, relative to the axis size n.
enum class AtomTest : std::uint8_t {
  kEqZero,  // == 0
  kNeZero,  // != 0
  kLtLast,  // < n-1
  kGeOne,   // >= 1
  kLeSize,  // <= n (always true)
  kGtSize,  // > n (always false)
  kEqSize,  // == n (always false)
};

struct AtomChoice {
  std::uint8_t axis = 0;  // which nameable axis (modulo how many there are)
  AtomTest test = AtomTest::kEqZero;
};

struct CondChoice {
  enum class Shape : std::uint8_t { kAtom, kAll, kAny, kNot, kTrue, kFalse };
  Shape shape = Shape::kAtom;
  AtomChoice first;
  AtomChoice second;  // kAll, kAny
};

// The condition, over the plain cluster axes and the thread axis that conditions may name; a
// constant when the mesh has none.
Cond resolve_cond(const CondChoice& choice, const AxisEnvironment& env);

Cond constant_cond(bool value);
// `lax.axis_index(axis) == value`.
Cond axis_equals(const std::string& axis, std::int64_t value);

}  // namespace collfuzz::generators
