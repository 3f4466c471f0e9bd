#include "harness/core/reduction.h"

#include <cmath>
#include <cstring>

#include "harness/core/dtype.h"
#include "harness/core/element_value.h"

namespace collfuzz {
namespace {

struct FloatFormat {
  int mantissa = 23;
  int exponent = 8;
};

FloatFormat float_format_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {10, 5};
    case DType::kBFloat16:
      return {7, 8};
    case DType::kFloat64:
      return {52, 11};
    default:
      return {23, 8};
  }
}

std::int64_t sign_extend(std::uint64_t v, int bits) {
  if (bits >= 64) return static_cast<std::int64_t>(v);
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}

}  // namespace

std::uint64_t round_to_float_bits(DType dtype, double v) {
  const FloatFormat f = float_format_of(dtype);
  const int total = f.mantissa + f.exponent + 1;
  const std::uint64_t sign = std::signbit(v) ? std::uint64_t{1} << (total - 1) : 0;
  const std::uint64_t exp_all = ((std::uint64_t{1} << f.exponent) - 1) << f.mantissa;
  if (std::isnan(v)) return sign | exp_all | (std::uint64_t{1} << (f.mantissa - 1));
  if (std::isinf(v)) return sign | exp_all;
  if (dtype == DType::kFloat64) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
  }
  const double a = std::fabs(v);
  if (a == 0) return sign;
  int e = 0;
  (void)std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int bias = (1 << (f.exponent - 1)) - 1;
  const int exp = std::max(e - 1, 1 - bias);  // the binade (subnormals share the smallest)
  const int ulp = exp - f.mantissa;
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(a, -ulp)), ulp);  // ties to even
  const std::optional<std::uint64_t> bits = exact_float_bits(dtype, std::copysign(rounded, v));
  return bits ? *bits : sign | exp_all;  // past the largest finite value
}

std::uint64_t apply_reduction(ReductionOp op, DType dtype, std::uint64_t old, std::uint64_t src) {
  const DTypeInfo& info = dtype_info(dtype);
  const int bits = dtype_bits(dtype);
  const std::uint64_t mask = low_bits_mask(bits);
  old &= mask;
  src &= mask;
  if (info.is_float) {
    const double a = float_element_value(dtype, old);
    const double b = float_element_value(dtype, src);
    // PTX's canonical NaN: all exponent and mantissa bits set, sign clear.
    const std::uint64_t canonical_nan = mask >> 1;
    // -0 orders below +0.
    const auto below = [](double x, double y) {
      return x < y || (x == 0 && y == 0 && std::signbit(x) && !std::signbit(y));
    };
    switch (op) {
      case ReductionOp::kAdd: {
        const double sum = a + b;
        return std::isnan(sum) ? canonical_nan : round_to_float_bits(dtype, sum);
      }
      case ReductionOp::kMin:
      case ReductionOp::kUmin:
      case ReductionOp::kSmin:
      case ReductionOp::kMax:
      case ReductionOp::kUmax:
      case ReductionOp::kSmax: {
        if (std::isnan(a) && std::isnan(b)) return canonical_nan;
        if (std::isnan(a)) return src;
        if (std::isnan(b)) return old;
        const bool is_min =
            op == ReductionOp::kMin || op == ReductionOp::kUmin || op == ReductionOp::kSmin;
        return (is_min ? below(b, a) : below(a, b)) ? src : old;
      }
      default:
        break;  // the integer ops on a float's bits
    }
  }
  const bool is_signed = info.is_signed;
  const auto less = [&](bool signed_compare) {
    return signed_compare ? sign_extend(src, bits) < sign_extend(old, bits) : src < old;
  };
  switch (op) {
    case ReductionOp::kAdd:
      return (old + src) & mask;
    case ReductionOp::kMin:
      return less(is_signed) ? src : old;
    case ReductionOp::kMax:
      return less(is_signed) ? old : src;
    case ReductionOp::kUmin:
      return less(false) ? src : old;
    case ReductionOp::kUmax:
      return src > old ? src : old;
    case ReductionOp::kSmin:
      return less(true) ? src : old;
    case ReductionOp::kSmax:
      return sign_extend(src, bits) > sign_extend(old, bits) ? src : old;
    case ReductionOp::kInc:
      return old >= src ? 0 : (old + 1) & mask;
    case ReductionOp::kDec:
      return (old == 0 || old > src) ? src : old - 1;
    case ReductionOp::kAnd:
      return old & src;
    case ReductionOp::kOr:
      return old | src;
    case ReductionOp::kXor:
      return old ^ src;
  }
  return old;
}

}  // namespace collfuzz
