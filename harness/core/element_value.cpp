#include "harness/core/element_value.h"

#include <bit>
#include <cfloat>
#include <cmath>

namespace collfuzz {
namespace {

struct MiniFormat {
  int ebits;
  int mbits;
  bool finite_only;  // no infinities; exponent and mantissa all ones is NaN (float8_e4m3fn)
};

MiniFormat format_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3FN:
      return {4, 3, true};
    case DType::kFloat8E5M2:
      return {5, 2, false};
    case DType::kBFloat16:
      return {8, 7, false};
    default:  // kFloat16
      return {5, 10, false};
  }
}

double decode(std::uint64_t bits, MiniFormat f) {
  const std::uint64_t mant = bits & ((1ull << f.mbits) - 1);
  const std::uint64_t exp = (bits >> f.mbits) & ((1ull << f.ebits) - 1);
  const bool neg = (bits >> (f.mbits + f.ebits)) & 1;
  const int bias = (1 << (f.ebits - 1)) - 1;
  const std::uint64_t all = (1ull << f.ebits) - 1;
  double v = 0;
  if (f.finite_only && exp == all && mant == ((1ull << f.mbits) - 1)) {
    v = NAN;
  } else if (!f.finite_only && exp == all) {
    v = mant ? NAN : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - f.mbits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1ull << f.mbits)),
                   static_cast<int>(exp) - bias - f.mbits);
  }
  return neg ? -v : v;
}

std::optional<std::uint64_t> encode(double v, MiniFormat f) {
  if (!std::isfinite(v)) return std::nullopt;
  const std::uint64_t sign = std::signbit(v) ? (1ull << (f.ebits + f.mbits)) : 0;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  const int bias = (1 << (f.ebits - 1)) - 1;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the unbiased exponent is e - 1
  const int unbiased = e - 1;
  std::uint64_t exp_field = 0;
  double mant = 0;
  if (unbiased < 1 - bias) {  // subnormal: a = mant * 2^(1 - bias - mbits)
    mant = std::ldexp(a, bias - 1 + f.mbits);
  } else {
    if (unbiased + bias >= (1 << f.ebits)) return std::nullopt;
    exp_field = static_cast<std::uint64_t>(unbiased + bias);
    mant = std::ldexp(a, f.mbits - unbiased) - static_cast<double>(1ull << f.mbits);
  }
  if (mant != std::floor(mant) || mant < 0 || mant >= static_cast<double>(1ull << f.mbits))
    return std::nullopt;
  const std::uint64_t bits = sign | (exp_field << f.mbits) | static_cast<std::uint64_t>(mant);
  // The all-ones patterns are NaN or an infinity, which equal no finite v.
  if (decode(bits, f) != v) return std::nullopt;
  return bits;
}

}  // namespace

double float_element_value(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::kFloat32:
      return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DType::kFloat64:
      return std::bit_cast<double>(bits);
    default:
      return decode(bits, format_of(dtype));
  }
}

std::optional<std::uint64_t> exact_float_bits(DType dtype, double v) {
  if (!std::isfinite(v)) return std::nullopt;
  switch (dtype) {
    case DType::kFloat64:
      return std::bit_cast<std::uint64_t>(v);
    case DType::kFloat32: {
      if (std::fabs(v) > FLT_MAX) return std::nullopt;
      const auto f = static_cast<float>(v);
      if (static_cast<double>(f) != v) return std::nullopt;
      return std::bit_cast<std::uint32_t>(f);
    }
    default:
      return encode(v, format_of(dtype));
  }
}

}  // namespace collfuzz
