#include "harness/core/vector_arith.h"

#include <algorithm>
#include <cmath>

#include "harness/core/element_value.h"
#include "harness/core/reduction.h"

namespace collfuzz {
namespace {

double smallest_normal(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 0x1p-14;
    case DType::kFloat64:
      return 0x1p-1022;
    default:
      return 0x1p-126;  // float32, bfloat16
  }
}

// min or max of two elements: integers compared as the dtype's signed or unsigned values; floats
// by value, the result one of the operands exactly (PTX min/max.NaN, XLA's minimum/maximum). A
// NaN result, a subnormal one and a tie of +0 and -0 (whose sign PTX and the CPU may pick
// differently) are unspecified.
VectorElement vector_min_max(VectorKind op, DType dtype, std::uint64_t a, std::uint64_t b,
                             std::uint64_t mask) {
  const bool want_max = op == VectorKind::kMax;
  const DTypeInfo& info = dtype_info(dtype);
  if (!info.is_float) {
    const int bits = dtype_bits(dtype);
    bool a_less = false;
    if (info.is_signed) {
      const auto sx = [&](std::uint64_t v) {
        const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
        return static_cast<std::int64_t>(((v & mask) ^ sign) - sign);
      };
      a_less = sx(a) < sx(b);
    } else {
      a_less = (a & mask) < (b & mask);
    }
    return {(want_max ? (a_less ? b : a) : (a_less ? a : b)) & mask, false};
  }
  const double x = float_element_value(dtype, a & mask);
  const double y = float_element_value(dtype, b & mask);
  if (std::isnan(x) || std::isnan(y)) return {a & mask, true};
  const bool pick_a = want_max ? x > y : x < y;
  const std::uint64_t out = (pick_a ? a : b) & mask;
  const double r = pick_a ? x : y;
  const bool zero_tie = x == 0 && y == 0 && std::signbit(x) != std::signbit(y);
  const bool subnormal = r != 0 && std::fabs(r) < smallest_normal(dtype);
  return {out, zero_tie || subnormal};
}

// The integer value of `a` in dtype `d` (sign-extended when `d` is signed).
std::int64_t integer_value(DType d, std::uint64_t a) {
  const int bits = dtype_bits(d);
  const std::uint64_t v = a & low_bits_mask(bits);
  if (!dtype_info(d).is_signed || bits == 64) return static_cast<std::int64_t>(v);
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}

}  // namespace

VectorElement vector_convert(DType from, DType to, std::uint64_t a, ComputedBy by) {
  const bool from_float = dtype_info(from).is_float;
  const bool to_float = dtype_info(to).is_float;
  const int to_bits = dtype_bits(to);
  if (!from_float && !to_float) {
    return {static_cast<std::uint64_t>(integer_value(from, a)) & low_bits_mask(to_bits), false};
  }
  const double x = from_float ? float_element_value(from, a & low_bits_mask(dtype_bits(from)))
                              : static_cast<double>(integer_value(from, a));
  if (to_float) {
    if (std::isnan(x)) return {0, true};
    // A 32-bit integer or a float16/bfloat16/float32 value is exact in a double: one rounding
    // (XLA on the CPU: an int32/uint32 to bfloat16 goes through float32, two).
    double v = x;
    if (by == ComputedBy::kXlaCpu && !from_float && dtype_bits(from) == 32 &&
        to == DType::kBFloat16)
      v = float_element_value(DType::kFloat32, round_to_float_bits(DType::kFloat32, x));
    const std::uint64_t out = round_to_float_bits(to, v);
    const double r = float_element_value(to, out);
    const bool subnormal = r != 0 && std::fabs(r) < smallest_normal(to);
    return {out, subnormal};
  }
  const bool is_signed = dtype_info(to).is_signed;
  const double lo = is_signed ? -std::ldexp(1.0, to_bits - 1) : 0.0;
  const double hi = is_signed ? std::ldexp(1.0, to_bits - 1) - 1 : std::ldexp(1.0, to_bits) - 1;
  const double t = std::isnan(x) ? 0.0 : std::trunc(x);
  const bool in_range = !std::isnan(x) && t >= lo && t <= hi;
  if (!in_range && by == ComputedBy::kHardware) return {0, true};
  const double s = std::clamp(t, lo, hi);  // XLA: saturated, NaN -> 0
  return {static_cast<std::uint64_t>(static_cast<std::int64_t>(s)) & low_bits_mask(to_bits), false};
}

std::uint64_t vector_iota(DType dtype, std::int64_t index) {
  const std::uint64_t i = static_cast<std::uint64_t>(index);
  if (!dtype_info(dtype).is_float) return i & low_bits_mask(dtype_bits(dtype));
  return round_to_float_bits(dtype, static_cast<double>(index));
}

std::uint64_t vector_shift(VectorKind op, int bits, std::uint64_t a, std::uint64_t amount) {
  const std::uint64_t mask = low_bits_mask(bits);
  const bool negative = (a >> (bits - 1)) & 1;
  // Past the width XLA's rule: all bits out, or the sign everywhere.
  if (amount >= static_cast<std::uint64_t>(bits)) {
    return op == VectorKind::kShiftRightArithmetic && negative ? mask : 0;
  }
  if (op == VectorKind::kShiftLeft) return (a << amount) & mask;
  std::uint64_t r = a >> amount;
  if (op == VectorKind::kShiftRightArithmetic && negative && amount > 0)
    r |= mask & ~(mask >> amount);
  return r;
}

VectorElement vector_binary(VectorKind op, DType dtype, std::uint64_t a, std::uint64_t b,
                            ComputedBy by) {
  const int bits = dtype_bits(dtype);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  if (op == VectorKind::kMin || op == VectorKind::kMax)
    return vector_min_max(op, dtype, a, b, mask);
  if (is_bitwise(op)) {  // integers only (the case reader's)
    const std::uint64_t r = op == VectorKind::kAnd ? a & b : op == VectorKind::kOr ? a | b : a ^ b;
    return {r & mask, false};
  }
  if (is_shift(op)) {
    const bool past = (b & mask) >= static_cast<std::uint64_t>(bits);
    return {vector_shift(op, bits, a & mask, b & mask), past && by == ComputedBy::kHardware};
  }
  if (!dtype_info(dtype).is_float) {
    const std::uint64_t r = op == VectorKind::kAdd ? a + b : op == VectorKind::kSub ? a - b : a * b;
    return {r & mask, false};
  }
  const double x = float_element_value(dtype, a & mask);
  const double y = float_element_value(dtype, b & mask);
  const double r = op == VectorKind::kAdd ? x + y : op == VectorKind::kSub ? x - y : x * y;
  const std::uint64_t out = round_to_float_bits(dtype, r);
  const bool subnormal = r != 0 && std::fabs(r) < smallest_normal(dtype);
  return {out, std::isnan(r) || subnormal};
}

}  // namespace collfuzz
