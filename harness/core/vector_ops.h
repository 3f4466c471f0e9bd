// The operators of a vector value (docs/case-format.md, "vector_store"), by name and by what
// Mosaic GPU asks of them: one table for the case reader, the case writer, the reference and the
// lowering.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "harness/core/case.h"

namespace collfuzz {

// The binary operators with their names in the case format ({"add": [A, B]} ...), in the order
// the format lists them.
struct BinaryVectorOp {
  std::string_view name;
  VectorKind kind;
};
std::span<const BinaryVectorOp> binary_vector_ops();

// The case format's name of a binary operator; nullopt for a leaf or a conversion.
std::optional<std::string_view> binary_vector_op_name(VectorKind k);

// Whether the value (of dtype `dtype`) holds an add, sub, mul, min, max or shift on 8-bit
// elements: what FragmentedArray._pointwise(restrict_bitwidth=True) refuses (__lshift__ and
// __rshift__ pass the default, True). The bitwise and, or, xor pass restrict_bitwidth=False; a
// conversion is no arithmetic, and below it the operand's dtype counts (`(v.astype(int16) +
// 1).astype(int8)` computes on 16 bits).
bool computes_8bit_arithmetic(const VectorValue& v, DType dtype);

// Whether `v` has a register layout of its own: it loads a ref, holds an iota (cast to a
// strided layout) or reads a carried value that has one. A value of constants only is a splat
// (WGSplatFragLayout) instead.
bool has_own_layout(const VectorValue& v);

}  // namespace collfuzz
