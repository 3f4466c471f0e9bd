// Element values of the float dtypes as doubles, both ways and exactly: an explicit `values` fill
// holds JSON numbers (docs/case-format.md "Fills"), which the case reader turns into bit patterns
// and the writer back into numbers.
#pragma once

#include <cstdint>
#include <optional>

#include "harness/core/dtype.h"

namespace collfuzz {

// The value of the bit pattern `bits` of a float dtype (NaN and infinities as such).
double float_element_value(DType dtype, std::uint64_t bits);

// The bit pattern of the float dtype `dtype` whose value is exactly `v` (the sign of a zero
// kept), or nullopt when no finite value of the dtype equals `v` (a fraction it cannot hold, a
// magnitude past its largest value, NaN, an infinity).
std::optional<std::uint64_t> exact_float_bits(DType dtype, double v);

}  // namespace collfuzz
