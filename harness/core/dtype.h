// Element types of arrays and allocations, with the names JAX and MLIR print for them.
#pragma once

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

const DTypeInfo& dtype_info(DType d);
std::optional<DType> parse_dtype(std::string_view name);
inline std::string_view dtype_name(DType d) { return dtype_info(d).name; }
inline int dtype_bits(DType d) { return dtype_info(d).bits; }

// Every dtype, in declaration order (for generators and docs).
std::span<const DTypeInfo> all_dtypes();

}  // namespace collfuzz
