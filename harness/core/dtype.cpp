#include "harness/core/dtype.h"

#include <array>

namespace collfuzz {
namespace {

constexpr std::array<DTypeInfo, 16> kDTypes = {{
    {DType::kInt4, "int4", 4, "i4", false, true},
    {DType::kUInt4, "uint4", 4, "i4", false, false},
    {DType::kInt8, "int8", 8, "i8", false, true},
    {DType::kUInt8, "uint8", 8, "i8", false, false},
    {DType::kInt16, "int16", 16, "i16", false, true},
    {DType::kUInt16, "uint16", 16, "i16", false, false},
    {DType::kInt32, "int32", 32, "i32", false, true},
    {DType::kUInt32, "uint32", 32, "i32", false, false},
    {DType::kInt64, "int64", 64, "i64", false, true},
    {DType::kUInt64, "uint64", 64, "i64", false, false},
    {DType::kFloat8E4M3FN, "float8_e4m3fn", 8, "f8E4M3FN", true, false},
    {DType::kFloat8E5M2, "float8_e5m2", 8, "f8E5M2", true, false},
    {DType::kBFloat16, "bfloat16", 16, "bf16", true, false},
    {DType::kFloat16, "float16", 16, "f16", true, false},
    {DType::kFloat32, "float32", 32, "f32", true, false},
    {DType::kFloat64, "float64", 64, "f64", true, false},
}};

}  // namespace

const DTypeInfo& dtype_info(DType d) { return kDTypes[static_cast<std::size_t>(d)]; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

std::span<const DTypeInfo> all_dtypes() { return kDTypes; }

}  // namespace collfuzz
