// Element types of arrays and allocations, with the names JAX and MLIR print for them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace collfuzz {

enum class DType : std::uint8_t {
  kInt4,
  kUInt4,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat8E4M3FN,
  kFloat8E5M2,
  kBFloat16,
  kFloat16,
  kFloat32,
  kFloat64,
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // numpy / jnp name, as `str(dtype)` prints it
  int bits;               // storage width in bits
  std::string_view mlir;  // MLIR element type, as `str(ir_type)` prints it
  bool is_float;
  bool is_signed;  // signed integer (floats: false)
};

namespace detail {
// In the header so that dtype_info and dtype_bits inline: the reference and the simulator ask for
// an element's width on every element they move.
inline constexpr std::array<DTypeInfo, 16> kDTypes = {{
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
}  // namespace detail

inline const DTypeInfo& dtype_info(DType d) { return detail::kDTypes[static_cast<std::size_t>(d)]; }
std::optional<DType> parse_dtype(std::string_view name);
inline std::string_view dtype_name(DType d) { return dtype_info(d).name; }
inline int dtype_bits(DType d) { return dtype_info(d).bits; }

// Every dtype, in declaration order (for generators and docs).
std::span<const DTypeInfo> all_dtypes();

}  // namespace collfuzz
