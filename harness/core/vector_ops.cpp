#include "harness/core/vector_ops.h"

#include <algorithm>
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

bool computes_arithmetic(const VectorValue& v) {
  if (binary_vector_op_name(v.kind) && !is_bitwise(v.kind)) return true;
  return std::any_of(v.args.begin(), v.args.end(),
                     [](const VectorValue& a) { return computes_arithmetic(a); });
}

bool has_own_layout(const VectorValue& v) {
  if (v.kind == VectorKind::kLoadSmem || v.kind == VectorKind::kLoadInput ||
      v.kind == VectorKind::kIota)
    return true;
  return std::any_of(v.args.begin(), v.args.end(),
                     [](const VectorValue& a) { return has_own_layout(a); });
}

}  // namespace collfuzz
