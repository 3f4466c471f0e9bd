#include "harness/core/vector_ops.h"

#include <array>

namespace collfuzz {

namespace {

constexpr std::array kBinary = {
    BinaryVectorOp{"add", VectorKind::kAdd},
    BinaryVectorOp{"sub", VectorKind::kSub},
    BinaryVectorOp{"mul", VectorKind::kMul},
    BinaryVectorOp{"min", VectorKind::kMin},
    BinaryVectorOp{"max", VectorKind::kMax},
    BinaryVectorOp{"and", VectorKind::kAnd},
    BinaryVectorOp{"or", VectorKind::kOr},
    BinaryVectorOp{"xor", VectorKind::kXor},
    BinaryVectorOp{"shift_left", VectorKind::kShiftLeft},
    BinaryVectorOp{"shift_right_logical", VectorKind::kShiftRightLogical},
    BinaryVectorOp{"shift_right_arithmetic", VectorKind::kShiftRightArithmetic},
};

}  // namespace

std::span<const BinaryVectorOp> binary_vector_ops() { return kBinary; }

std::optional<std::string_view> binary_vector_op_name(VectorKind k) {
  for (const BinaryVectorOp& op : kBinary)
    if (op.kind == k) return op.name;
  return std::nullopt;
}

bool computes_8bit_arithmetic(const VectorValue& v, DType dtype) {
  if (v.kind == VectorKind::kConvert) return computes_8bit_arithmetic(v.args[0], v.from);
  if (dtype_bits(dtype) == 8 && binary_vector_op_name(v.kind) && !is_bitwise(v.kind)) return true;
  for (const VectorValue& a : v.args) {
    if (computes_8bit_arithmetic(a, dtype)) return true;
  }
  return false;
}

bool has_own_layout(const VectorValue& v) {
  return any_vector_node(v, [](const VectorValue& n) {
    return n.kind == VectorKind::kLoadSmem || n.kind == VectorKind::kLoadInput ||
           n.kind == VectorKind::kIota || (n.kind == VectorKind::kCarry && n.carry_own_layout);
  });
}

}  // namespace collfuzz
