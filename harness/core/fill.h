// Deterministic contents of GMEM inputs: a pattern and a seed give the same bytes on every
// machine and in every executor (the JAX adapter reimplements this in Python; docs/case-format.md
// gives the algorithm).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

// The range [lo, hi] of the small integers the recipe fills (iota, random, constant, arange) store
// in `dtype`, exactly in every executor (docs/case-format.md "Fills").
std::pair<std::int64_t, std::int64_t> fill_value_range(DType dtype);

// The value of element `i` (row-major) of the array, as the raw bit pattern of its dtype, in the
// low `dtype_bits` bits.
std::uint64_t fill_element_bits(const ArraySpec& a, std::int64_t i);

// The whole array, packed: little-endian elements; int4/uint4 two per byte, low nibble first.
std::vector<std::uint8_t> fill_bytes(const ArraySpec& a);

// The same bytes, shared: the last few arrays of at most 4 MiB filled on this thread are kept, so
// that the reference and an executor checking the same case fill each input once.
std::shared_ptr<const std::vector<std::uint8_t>> shared_fill_bytes(const ArraySpec& a);

// Reading and writing one element of a packed buffer.
std::uint64_t load_element(const std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i);
void store_element(std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i, std::uint64_t bits);
std::int64_t packed_bytes(std::int64_t elements, DType dtype);

// splitmix64's finaliser (inline: the generators hash with it once per random choice).
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace collfuzz
