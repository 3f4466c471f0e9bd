#include "generators/vector_back.h"

#include <utility>

#include "harness/core/element_value.h"

namespace collfuzz::generators {
namespace {

bool holds(DType d) {
  switch (d) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      return true;
    default:
      return false;
  }
}

VectorValue constant(DType dtype, std::int64_t c) {
  VectorValue v;
  v.kind = VectorKind::kConst;
  v.number = static_cast<double>(c);
  v.bits = dtype_info(dtype).is_float ? exact_float_bits(dtype, static_cast<double>(c)).value_or(0)
                                      : static_cast<std::uint64_t>(c);
  return v;
}

VectorValue binary(VectorKind kind, VectorValue a, VectorValue b) {
  VectorValue v;
  v.kind = kind;
  v.args.push_back(std::move(a));
  v.args.push_back(std::move(b));
  return v;
}

}  // namespace

void apply_vector_back(Body& ops, const VectorBackPlan& plan, const CopySmemToGmem& store,
                       DType dtype, std::int64_t elements) {
  if (!holds(dtype) || elements <= 0 || elements % 128 != 0 || store.predicate ||
      store.reduction_op) {
    return;
  }
  for (const Op& op : ops) {
    if (const auto* st = std::get_if<CopySmemToGmem>(&op.v); st && st->reduction_op) return;
  }
  VectorValue tile;
  tile.kind = VectorKind::kLoadSmem;
  tile.ref = store.src;
  tile.smem_index = store.src_index;
  tile.smem_slot = store.src_slot;
  const VectorValue c = constant(dtype, plan.constant);
  VectorStore vs;
  vs.dst = store.dst;
  vs.dst_index = store.dst_index;
  switch (plan.value) {
    case VectorValueShape::kLoad:
      vs.value = tile;
      break;
    case VectorValueShape::kAddConst:
      vs.value = binary(VectorKind::kAdd, tile, c);
      break;
    case VectorValueShape::kSquare:
      vs.value = binary(VectorKind::kMul, tile, tile);
      break;
    case VectorValueShape::kChain:
      vs.value = binary(VectorKind::kAdd,
                        binary(VectorKind::kMul, binary(VectorKind::kSub, tile, c), tile), c);
      break;
    case VectorValueShape::kConst:
      vs.value = c;
      break;
    case VectorValueShape::kMinConst:
      vs.value = binary(VectorKind::kMin, tile, c);
      break;
    case VectorValueShape::kMaxOfDiff:
      vs.value = binary(VectorKind::kMax, binary(VectorKind::kSub, tile, c), c);
      break;
  }
  if (plan.kind == VectorBackKind::kInPlace) {
    vs.dst = store.src;
    vs.dst_index.clear();
    vs.to_smem = true;
    vs.smem_index = store.src_index;
    vs.smem_slot = store.src_slot;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!std::holds_alternative<CopySmemToGmem>(ops[i].v)) continue;
      Body before;
      Op op;
      op.v = std::move(vs);
      before.push_back(std::move(op));
      if (plan.fence == SmemFence::kExplicit) {
        Op fence;
        fence.v = CommitSmem{};
        before.push_back(std::move(fence));
      }
      for (std::size_t k = i; k < ops.size(); ++k) {
        if (auto* st = std::get_if<CopySmemToGmem>(&ops[k].v))
          st->commit_smem = plan.fence == SmemFence::kStoreOwn;
      }
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i),
                 std::make_move_iterator(before.begin()), std::make_move_iterator(before.end()));
      return;
    }
    return;
  }
  Op op;
  op.v = std::move(vs);
  if (plan.kind == VectorBackKind::kAfter) {
    ops.push_back(std::move(op));
    return;
  }
  for (Op& o : ops) {
    if (std::holds_alternative<CopySmemToGmem>(o.v)) {
      o = std::move(op);
      return;
    }
  }
}

}  // namespace collfuzz::generators
