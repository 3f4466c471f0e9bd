// Array contents as values, for text output (`collfuzz run`, `explain`): a small buffer or output
// shown element by element instead of only its fnv1a64 digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/dtype.h"

namespace collfuzz {

// Arrays of at most this many elements are shown whole; larger ones by their first elements.
inline constexpr std::int64_t kShownElements = 32;
inline constexpr std::int64_t kShownPrefix = 8;

// One element of a packed row-major buffer as a number ("3", "-1.5", "nan").
std::string element_text(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i);

// "[1, 2, 3]" for up to kShownElements elements; "[1, 2, ..., 8, ...] (N elements)" beyond.
// Elements of 2 bytes or more whose bytes are all the SMEM sentinel 0xA5 (no copy wrote them)
// print as "~".
std::string elements_text(const std::vector<std::uint8_t>& bytes, DType dtype,
                          std::int64_t elements);

}  // namespace collfuzz
