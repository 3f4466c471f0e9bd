// Weighted choices that shrink towards the first alternative, which by convention is the
// simplest. RapidCheck's own gen::weightedElement and gen::weightedOneOf do not shrink across
// alternatives; a minimal failing case needs them to.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "harness/core/fill.h"

namespace collfuzz::generators {

namespace detail {

// The number a leaf choice draws from its rc::Random: a hash of the Random's state (its key and
// the path of splits that led to it, read through RapidCheck's own serialize). Every leaf gets
// its own split of the case's Random, so distinct leaves hash distinct states; the number is a
// function of (seed, index) alone, as next()'s is. next() would run RapidCheck's block cipher
// (about 560 instructions) once per leaf, a tenth of a campaign's time on ~100 leaves a case.
inline std::uint64_t leaf_number(const rc::Random& random) {
  std::array<std::uint8_t, 64> state{};  // key (32 bytes), bits and counter (<= 10 each), 1
  const auto end = rc::serialize(random, state.begin());
  std::uint64_t h = 0x636f6c6c66757a7aULL;
  for (auto it = state.begin(); it < end; it += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, &*it, 8);  // past `end`: the zeros the array starts with
    h = splitmix64(h ^ word);
  }
  return h;
}

// An index in [0, weights.size()) drawn with the given weights; shrinks towards 0.
inline rc::Gen<std::size_t> weighted_index(std::vector<std::size_t> weights) {
  std::size_t total = 0;
  for (auto w : weights) total += w;
  return [weights = std::move(weights), total](const rc::Random& random, int) {
    std::uint64_t x = leaf_number(random) % total;
    std::size_t i = 0;
    while (x >= weights[i]) x -= weights[i++];
    return rc::shrinkable::shrinkRecur(
        i, [](std::size_t v) { return rc::shrink::towards<std::size_t>(v, 0); });
  };
}

}  // namespace detail

template <typename T>
rc::Gen<T> weighted_element(std::vector<std::pair<std::size_t, T>> choices) {
  std::vector<std::size_t> weights;
  std::vector<T> values;
  for (auto& [w, v] : choices) {
    weights.push_back(w);
    values.push_back(std::move(v));
  }
  // Shared, not captured by value: RapidCheck copies a mapper into every shrinkable it makes.
  return rc::gen::map(detail::weighted_index(std::move(weights)),
                      [values = std::make_shared<const std::vector<T>>(std::move(values))](
                          std::size_t i) { return (*values)[i]; });
}

template <typename T>
rc::Gen<T> weighted_one_of(std::vector<std::pair<std::size_t, rc::Gen<T>>> choices) {
  std::vector<std::size_t> weights;
  std::vector<rc::Gen<T>> gens;
  for (auto& [w, g] : choices) {
    weights.push_back(w);
    gens.push_back(std::move(g));
  }
  return rc::gen::mapcat(detail::weighted_index(std::move(weights)),
                         [gens = std::make_shared<const std::vector<rc::Gen<T>>>(std::move(gens))](
                             std::size_t i) { return (*gens)[i]; });
}

// True with `percent` % probability; shrinks to false.
inline rc::Gen<bool> chance(std::size_t percent) {
  return weighted_element<bool>({{100 - percent, false}, {percent, true}});
}

// A value from `gen` with `percent` % probability, else nothing; shrinks to nothing.
template <typename T>
rc::Gen<std::optional<T>> sometimes(std::size_t percent, rc::Gen<T> gen) {
  return weighted_one_of<std::optional<T>>({{100 - percent, rc::gen::just(std::optional<T>())},
                                            {percent, rc::gen::cast<std::optional<T>>(gen)}});
}

// `count` values of `gen`, with `count` drawn from `counts` (weighted, shrinking to the first).
template <typename T>
rc::Gen<std::vector<T>> several(std::vector<std::pair<std::size_t, std::size_t>> counts,
                                rc::Gen<T> gen) {
  return rc::gen::mapcat(weighted_element<std::size_t>(std::move(counts)), [gen](std::size_t n) {
    return rc::gen::container<std::vector<T>>(n, gen);
  });
}

}  // namespace collfuzz::generators
