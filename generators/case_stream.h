// The stream of generated cases of a seed: case `index` of seed `seed` is the same on every
// machine. Generation is driven by an explicit rc::Random built from (seed, index), never by
// RapidCheck's global state, so a case is reproduced from those two numbers alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <rapidcheck/Random.h>
#include <rapidcheck/Shrinkable.h>

#include "harness/core/case.h"

namespace collfuzz::generators {

// The RapidCheck size every case is generated at (its nominal size: full ranges).
inline constexpr int kCaseSize = 100;

rc::Random case_random(std::uint64_t seed, std::uint64_t index);

// Case `index` of `seed`, named "gen-<seed>-<index>".
Case generate_case(std::uint64_t seed, std::uint64_t index);

// The same case with its RapidCheck shrink tree (for shrinking a finding within the generator's
// space of well-formed cases).
rc::Shrinkable<Case> generate_shrinkable(std::uint64_t seed, std::uint64_t index);

std::string generated_case_name(std::uint64_t seed, std::uint64_t index);

// The JAX release every generated case is pinned to (target.jax), for `collfuzz fuzz --jax V`;
// nullopt (the default): generated cases are not pinned. Set before a campaign starts (its forked
// workers inherit it); the stream is otherwise unchanged.
void pin_generated_jax(std::optional<JaxVersion> v);

}  // namespace collfuzz::generators
