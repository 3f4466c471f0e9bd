#include "harness/runner/element_values.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "harness/core/fill.h"

namespace collfuzz {
namespace {

constexpr std::uint8_t kSentinel = 0xA5;

// A float of `ebits` exponent and `mbits` mantissa bits (IEEE-like; `finite_only`: no infinities,
// the all-ones pattern is NaN, as float8_e4m3fn).
double minifloat(std::uint64_t bits, int ebits, int mbits, bool finite_only) {
  const std::uint64_t mant = bits & ((1ull << mbits) - 1);
  const std::uint64_t exp = (bits >> mbits) & ((1ull << ebits) - 1);
  const bool neg = (bits >> (mbits + ebits)) & 1;
  const int bias = (1 << (ebits - 1)) - 1;
  const std::uint64_t all = (1ull << ebits) - 1;
  double v;
  if (finite_only && exp == all && mant == ((1ull << mbits) - 1)) {
    v = NAN;
  } else if (!finite_only && exp == all) {
    v = mant ? NAN : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - mbits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1ull << mbits)),
                   static_cast<int>(exp) - bias - mbits);
  }
  return neg ? -v : v;
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string element_text(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i) {
  const std::uint64_t b = load_element(bytes, dtype, i);
  const DTypeInfo& info = dtype_info(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      float f;
      const auto u = static_cast<std::uint32_t>(b);
      std::memcpy(&f, &u, sizeof f);
      return number(f);
    }
    case DType::kFloat64: {
      double d;
      std::memcpy(&d, &b, sizeof d);
      return number(d);
    }
    case DType::kFloat16:
      return number(minifloat(b, 5, 10, false));
    case DType::kBFloat16:
      return number(minifloat(b, 8, 7, false));
    case DType::kFloat8E4M3FN:
      return number(minifloat(b, 4, 3, true));
    case DType::kFloat8E5M2:
      return number(minifloat(b, 5, 2, false));
    default:
      break;
  }
  if (info.is_signed && info.bits < 64 && ((b >> (info.bits - 1)) & 1)) {
    return std::to_string(static_cast<std::int64_t>(b) - (std::int64_t{1} << info.bits));
  }
  if (info.is_signed) return std::to_string(static_cast<std::int64_t>(b));
  return std::to_string(b);
}

std::string elements_text(const std::vector<std::uint8_t>& bytes, DType dtype,
                          std::int64_t elements) {
  const int bits = dtype_bits(dtype);
  const std::int64_t available = bits >= 8 ? static_cast<std::int64_t>(bytes.size()) / (bits / 8)
                                           : static_cast<std::int64_t>(bytes.size()) * 2;
  const std::int64_t n = std::min(elements, available);
  const std::int64_t shown = n <= kShownElements ? n : kShownPrefix;
  std::string out = "[";
  for (std::int64_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    bool sentinel = bits >= 16;
    for (int k = 0; sentinel && k < bits / 8; ++k)
      sentinel = bytes[static_cast<std::size_t>(i * (bits / 8) + k)] == kSentinel;
    out += sentinel ? "~" : element_text(bytes, dtype, i);
  }
  if (shown < n)
    out += ", ...] (" + std::to_string(n) + " elements)";
  else
    out += "]";
  return out;
}

}  // namespace collfuzz
