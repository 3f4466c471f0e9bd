#include "harness/core/vector_arith.h"

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

}  // namespace

VectorElement vector_binary(VectorKind op, DType dtype, std::uint64_t a, std::uint64_t b) {
  const int bits = dtype_bits(dtype);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
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
