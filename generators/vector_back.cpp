#include "generators/vector_back.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "generators/nd_loop_shape.h"
#include "harness/core/element_value.h"
#include "harness/core/vector_layout.h"

namespace collfuzz::generators {
namespace {

// The first strictly increasing dims of `shape` that `operand`'s dims can go to, each of its size,
// other than the trailing ones (a broadcast along other dims than new leading ones); nullopt
// where there are none.
std::optional<Shape> other_dims_of(const Shape& operand, const Shape& shape) {
  Shape dims;
  const auto place = [&](const auto& self, std::size_t k, std::size_t from) -> bool {
    if (k == operand.size()) {
      for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != static_cast<std::int64_t>(shape.size() - dims.size() + i)) return true;
      }
      return false;  // the trailing ones
    }
    for (std::size_t d = from; d < shape.size(); ++d) {
      if (shape[d] != operand[k]) continue;
      dims.push_back(static_cast<std::int64_t>(d));
      if (self(self, k + 1, d + 1)) return true;
      dims.pop_back();
    }
    return false;
  };
  if (operand.empty() || operand.size() >= shape.size() || !place(place, 0, 0)) return std::nullopt;
  return dims;
}

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

VectorValue convert(DType from, VectorValue a) {
  VectorValue v;
  v.kind = VectorKind::kConvert;
  v.from = from;
  v.args.push_back(std::move(a));
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

std::optional<DType> partner_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return DType::kFloat16;
    case DType::kFloat16:
    case DType::kBFloat16:
      return DType::kFloat32;
    case DType::kInt32:
      return DType::kInt16;
    case DType::kInt16:
      return DType::kInt32;
    case DType::kUInt32:
      return DType::kUInt16;
    case DType::kUInt16:
      return DType::kUInt32;
    default:
      return std::nullopt;
  }
}

namespace {

// The dtype a round trip goes through from `d`: the partner of another width, or with `pick` 2
// float32 -> bfloat16 and int16 -> float32, with `pick` 3 an integer through the 8-bit integer
// of its signedness (narrowing wraps; FragmentedArray.astype's trunci/extsi/extui). An 8-bit
// dtype goes through bfloat16 (`pick` 2: int8's is the inline-PTX prmt/sub.bf16x2 sequence),
// float32 (3) or the 16-bit integer of its signedness (1).
DType round_trip_dtype(DType d, std::int64_t pick) {
  if (pick == 2 && d == DType::kFloat32) return DType::kBFloat16;
  if (pick == 2 && d == DType::kInt16) return DType::kFloat32;
  const bool is_signed = dtype_info(d).is_signed;
  if (dtype_bits(d) == 8) {
    return pick == 2   ? DType::kBFloat16
           : pick == 3 ? DType::kFloat32
                       : (is_signed ? DType::kInt16 : DType::kUInt16);
  }
  if (pick == 3 && !dtype_info(d).is_float) return is_signed ? DType::kInt8 : DType::kUInt8;
  return partner_dtype(d).value_or(d);
}

}  // namespace

void apply_vector_back(Body& ops, const VectorBackPlan& plan, const CopySmemToGmem& store,
                       DType dtype, const Shape& tile_shape, const ArraySpec* partner, bool in_loop,
                       const NamedAxis* nd_axis, const NamedAxis* peer_axis,
                       const SmemTransforms& transforms) {
  const std::int64_t elements = element_count(tile_shape);
  if (!holds(dtype) || elements < 2 || (elements % 128 != 0 && !plan.uneven) || store.predicate ||
      store.reduction_op) {
    return;
  }
  for (const Op& op : ops) {
    if (const auto* st = std::get_if<CopySmemToGmem>(&op.v); st && st->reduction_op) return;
  }
  // A tile swizzled without a tiling takes no vector store of its own loads (not expressible):
  // the write-back becomes one (kReplace).
  const VectorBackKind kind =
      plan.kind == VectorBackKind::kInPlace && transforms.any() && transforms.tiling.empty()
          ? VectorBackKind::kReplace
          : plan.kind;
  VectorValue tile;
  tile.kind = VectorKind::kLoadSmem;
  tile.ref = store.src;
  tile.smem_index = store.src_index;
  tile.smem_slot = store.src_slot;
  tile.smem_transforms = transforms;
  // The peer: the mirror (size - 1 - i) or the next CTA ((i + 1) % size) along the axis.
  std::string peer_name;
  DynStart peer_index;
  if (plan.peer != 0 && peer_axis != nullptr) {
    peer_name = peer_axis->name.as_plain();
    peer_index = plan.peer == 1 ? DynStart{peer_name, -1, peer_axis->size - 1}
                                : DynStart{peer_name, 1, 1, false, peer_axis->size};
  }
  // A DSMEM read of the peer's tile (docs/case-format.md, "DSMEM reads"), except that a
  // kInPlace store to the next CTA writes the peer's tile instead (a DSMEM write).
  const bool peer_write = !peer_name.empty() && plan.peer == 2 && kind == VectorBackKind::kInPlace;
  if (!peer_name.empty() && !peer_write) {
    tile.cluster_axis = peer_name;
    tile.cluster_index = peer_index;
  }
  const VectorValue c = constant(dtype, plan.constant);
  VectorStore vs;
  // kCarried: the loop that computes the value, placed right before the vector store.
  Op carry_loop;
  carry_loop.v = CommitSmem{};  // none until kCarried makes it a loop
  const auto place = [&](std::size_t at, Op store_op) {
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(at), std::move(store_op));
    if (std::holds_alternative<Loop>(carry_loop.v))
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(at), std::move(carry_loop));
  };
  vs.dst = store.dst;
  vs.dst_index = store.dst_index;
  VectorValueShape shape = plan.value;
  if (transforms.any()) {
    switch (shape) {
      case VectorValueShape::kIota:
      case VectorValueShape::kIotaUncast:
      case VectorValueShape::kBroadcast:
      case VectorValueShape::kBroadcastInner:
      case VectorValueShape::kBroadcastOne:
      case VectorValueShape::kCarried:
        shape = VectorValueShape::kAddConst;
        break;
      default:
        break;
    }
  }
  switch (shape) {
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
    case VectorValueShape::kRoundTrip: {
      const DType via = round_trip_dtype(dtype, plan.constant);
      // An 8-bit tile widened with a 16-bit integer takes the add there, as Pallas's 8-bit rule
      // asks (lower.vector.pointwise_8bit's fix): (tile.astype(int16) + c).astype(int8).
      VectorValue wide = convert(dtype, tile);
      if (dtype_bits(dtype) == 8 && plan.constant == 1)
        wide = binary(VectorKind::kAdd, std::move(wide), constant(via, plan.constant));
      vs.value = convert(via, std::move(wide));
      break;
    }
    case VectorValueShape::kMixedWidth: {
      if (partner == nullptr) {
        vs.value = tile;
        break;
      }
      VectorValue w;
      w.kind = VectorKind::kLoadInput;
      w.ref = partner->name;
      vs.value = binary(VectorKind::kAdd, convert(partner->dtype, std::move(w)), tile);
      break;
    }
    case VectorValueShape::kBitwise:
      // Constant 3 goes left of the xor (`c ^ tile`): under Lane an 8-bit bitwise op whose
      // left operand is a splat is refused (lower.vector.pointwise_8bit), `tile ^ c` is not.
      vs.value = dtype_info(dtype).is_float ? binary(VectorKind::kAdd, tile, c)
                 : plan.constant == 3 ? binary(VectorKind::kOr, binary(VectorKind::kXor, c, tile),
                                               binary(VectorKind::kAnd, tile, c))
                                      : binary(VectorKind::kOr, binary(VectorKind::kXor, tile, c),
                                               binary(VectorKind::kAnd, tile, c));
      break;
    case VectorValueShape::kIota:
    case VectorValueShape::kIotaUncast: {
      // kIota: the iota cast to the strided layout of the dtype, or (constant 3) of vec_size 1.
      // kIotaUncast: no cast (Lane refuses it, lower.vector.iota_uncast; Warpgroup lays it out
      // as a load, dialect.vector.layout_inference where its count is no multiple of 128), its
      // vec_size the strided layout's that the parser gives it.
      const bool uncast = plan.value == VectorValueShape::kIotaUncast;
      VectorValue iota;
      iota.kind = VectorKind::kIota;
      iota.iota_dimension = plan.constant % static_cast<std::int64_t>(tile_shape.size());
      iota.iota_layout_cast = !uncast;
      iota.iota_vec_size =
          plan.constant == 3 && !uncast
              ? 1
              : std::max<std::int64_t>(1, strided_vec_size(dtype_bits(dtype), elements));
      if (!uncast) {
        // The case language casts to a power of two (strided_vec_size gives 3 for int8[384]; a
        // case file with it does not parse: the emulated GPU campaign's worker said so), one
        // that divides the count by 128.
        iota.iota_vec_size = static_cast<std::int64_t>(
            std::bit_floor(static_cast<std::uint64_t>(iota.iota_vec_size)));
        while (iota.iota_vec_size > 1 && elements % (iota.iota_vec_size * 128) != 0)
          iota.iota_vec_size /= 2;
      }
      // Vectors that cross rows are not expressible (JAX computes their indices wrong): a cast
      // to vec_size 1 then.
      if (tile_shape.back() % iota.iota_vec_size != 0) {
        iota.iota_vec_size = 1;
        iota.iota_layout_cast = true;
      }
      const VectorKind op = dtype_info(dtype).is_float ? VectorKind::kAdd : VectorKind::kXor;
      vs.value = plan.constant == 2 ? binary(op, iota, tile) : binary(op, tile, iota);
      break;
    }
    case VectorValueShape::kBroadcast: {
      const Shape row_shape(tile_shape.begin() + 1, tile_shape.end());
      const VectorKind op = dtype_info(dtype).is_float ? VectorKind::kAdd : VectorKind::kXor;
      if (row_shape.empty() || element_count(row_shape) % 128 != 0) {
        vs.value = binary(VectorKind::kAdd, tile, c);
        break;
      }
      VectorValue row = tile;
      row.smem_index.push_back(0);
      VectorValue rows;
      rows.kind = VectorKind::kBroadcast;
      rows.broadcast_shape = row_shape;
      rows.args.push_back(std::move(row));
      vs.value = plan.constant == 2 ? binary(VectorKind::kAdd, tile, std::move(rows))
                                    : binary(op, std::move(rows), c);
      break;
    }
    case VectorValueShape::kBroadcastInner: {
      if (tile_shape.size() < 2) {
        vs.value = binary(VectorKind::kAdd, tile, c);
        break;
      }
      Shape operand(tile_shape.begin(), tile_shape.end() - 1);
      Shape dims;
      for (std::size_t k = 0; k + 1 < tile_shape.size(); ++k)
        dims.push_back(static_cast<std::int64_t>(k));
      VectorValue x = c;
      const Shape row_shape(tile_shape.begin() + 1, tile_shape.end());
      if (const std::optional<Shape> row_dims = other_dims_of(row_shape, tile_shape);
          plan.constant != 3 && row_dims) {
        x = tile;  // tile.at[0][...] onto dims of its sizes: y[r, ..., c] = tile[0, r, ...]
        x.smem_index.push_back(0);
        operand = row_shape;
        dims = *row_dims;
      } else if (plan.constant != 3 && element_count(operand) % 128 == 0) {
        x = VectorValue{};
        x.kind = VectorKind::kIota;
        x.iota_dimension = 0;
        x.iota_vec_size = 1;
      }
      VectorValue b;
      b.kind = VectorKind::kBroadcast;
      b.broadcast_shape = operand;
      b.broadcast_dims = dims;
      b.args.push_back(std::move(x));
      const VectorKind op = dtype_info(dtype).is_float ? VectorKind::kAdd : VectorKind::kXor;
      vs.value = binary(op, tile, std::move(b));
      break;
    }
    case VectorValueShape::kBroadcastOne: {
      // The dim made 1: the first (constant 1), or the first after a kept dim (more than 1)
      // that leaves a multiple of 128 elements (a strided operand, which Mosaic GPU refuses to
      // broadcast so).
      std::size_t one = 0;
      if (plan.constant != 1) {
        one = tile_shape.size();
        for (std::size_t k = 1; k < tile_shape.size() && one == tile_shape.size(); ++k) {
          Shape o = tile_shape;
          o[k] = 1;
          if (tile_shape[k] > 1 && tile_shape[k - 1] > 1 && element_count(o) % 128 == 0) one = k;
        }
      }
      if (tile_shape.size() < 2 || one == tile_shape.size() || tile_shape[one] == 1) {
        vs.value = binary(VectorKind::kAdd, tile, c);
        break;
      }
      Shape operand = tile_shape;
      operand[one] = 1;
      if (element_count(operand) % 128 != 0) {  // not modelled along the trailing dims
        vs.value = binary(VectorKind::kAdd, tile, c);
        break;
      }
      VectorValue x;
      x.kind = VectorKind::kIota;
      x.iota_dimension = static_cast<std::int64_t>(tile_shape.size()) - 1;
      x.iota_vec_size = 1;
      VectorValue b;
      b.kind = VectorKind::kBroadcast;
      b.broadcast_shape = operand;
      b.args.push_back(std::move(x));
      const VectorKind op = dtype_info(dtype).is_float ? VectorKind::kAdd : VectorKind::kXor;
      vs.value = binary(op, tile, std::move(b));
      break;
    }
    case VectorValueShape::kCarried: {
      const VectorKind op = dtype_bits(dtype) == 8 ? VectorKind::kXor : VectorKind::kAdd;
      if (in_loop || elements % 128 != 0) {
        vs.value = binary(op, tile, c);
        break;
      }
      Loop loop;
      loop.trip_count = plan.constant + 1;
      Loop::Carry carry;
      carry.name = "acc_" + store.dst;
      carry.dtype = dtype;
      carry.shape = tile_shape;
      carry.init = plan.constant == 2 ? c : tile;
      VectorValue acc;
      acc.kind = VectorKind::kCarry;
      acc.ref = carry.name;
      acc.carry_own_layout = true;  // the tile it adds makes it strided
      carry.next = binary(op, acc, tile);
      loop.carry = std::move(carry);
      if (plan.carry_nd && nd_axis) {
        make_nd_loop(loop, NdLoopPlan{}, *nd_axis, loop.trip_count * nd_axis->size, "");
        finish_nd_loop(loop);
      }
      carry_loop.v = std::move(loop);
      vs.value = std::move(acc);
      break;
    }
    case VectorValueShape::kShift:
      vs.value = dtype_info(dtype).is_float
                     ? binary(VectorKind::kAdd, tile, c)
                     : binary(VectorKind::kXor,
                              binary(VectorKind::kShiftRightArithmetic,
                                     binary(VectorKind::kShiftLeft, tile, c), c),
                              binary(VectorKind::kShiftRightLogical, tile, c));
      break;
    case VectorValueShape::kShiftByTile:
      if (dtype_info(dtype).is_float) {
        vs.value = binary(VectorKind::kAdd, tile, c);
      } else if (plan.constant == 3) {
        vs.value = binary(VectorKind::kShiftLeft, tile, tile);
      } else {
        const VectorValue below = constant(dtype, dtype_bits(dtype) - 1);
        vs.value = binary(
            VectorKind::kXor,
            binary(VectorKind::kShiftRightArithmetic, tile, binary(VectorKind::kAnd, tile, below)),
            binary(VectorKind::kShiftLeft, tile, c));
      }
      break;
  }
  if (kind == VectorBackKind::kInPlace) {
    vs.dst = store.src;
    vs.dst_index.clear();
    vs.to_smem = true;
    vs.smem_transforms = transforms;
    vs.smem_index = store.src_index;
    vs.smem_slot = store.src_slot;
    if (peer_write) {
      vs.cluster_axis = peer_name;
      vs.cluster_index = peer_index;
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!std::holds_alternative<CopySmemToGmem>(ops[i].v)) continue;
      Body before;
      if (std::holds_alternative<Loop>(carry_loop.v)) before.push_back(std::move(carry_loop));
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
  if (kind == VectorBackKind::kAfter) {
    place(ops.size(), std::move(op));
    return;
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (std::holds_alternative<CopySmemToGmem>(ops[i].v)) {
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      place(i, std::move(op));
      return;
    }
  }
}

}  // namespace collfuzz::generators
