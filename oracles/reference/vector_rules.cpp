// The rules of vector values (docs/case-format.md, "vector_store"): what Mosaic GPU's lowering of
// a vector store's value refuses (FragmentedArray._pointwise, the strided layout's element count,
// Warpgroup's layout inference and splat stores), in both releases alike.

#include <optional>

#include "harness/core/memref_text.h"
#include "harness/core/ndarray.h"
#include "harness/core/outcome_json.h"
#include "harness/core/pyrepr.h"
#include "harness/core/smem_layout.h"
#include "harness/core/vector_layout.h"
#include "harness/core/vector_ops.h"
#include "harness/core/wgmma_transfer.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

// The first rule the lower stage meets in a vector value, and where.
struct LowerEvent {
  RuleId rule = RuleId::kCount;
  const VectorValue* node = nullptr;
  Shape shape;         // the node's
  std::string layout;  // lower.vector.broadcast_layout: the operand's layout repr
};

// Walks `v` (of dtype `d` and shape `shape`) in the order Python evaluates it, the jaxpr's (an
// op's operands before it, the left one first), and records in `first` the first rule the lower
// stage meets there: under Lane a load of a count that is no multiple of 128 (load_strided in
// _get_lowering_rule), an 8-bit op that FragmentedArray._pointwise restricts, or a binary op on two
// register layouts that differ; under both semantics an iota whose layout cast's strided layout
// does not divide the count (lower_jaxpr_to_mosaic_gpu builds it as the iota's hint), and under
// Lane a broadcast along dims other than new leading ones (_broadcast_in_dim_lowering_rule names
// its operand's layout). Returns the
// node's register vector length under Lane: a load's ref dtype's strided one, an iota's cast's, a
// conversion's or a broadcast's operand's, a binary op's non-constant operands'; nullopt for a
// constant (a splat takes the other operand's layout).
std::optional<std::int64_t> lower_walk(const VectorValue& v, DType d, const Shape& shape, bool lane,
                                       const CarryLayouts& carries,
                                       std::optional<LowerEvent>& first) {
  const std::int64_t elements = element_count(shape);
  const auto meet = [&](RuleId rule) {
    if (!first) first = LowerEvent{rule, &v, shape, {}};
  };
  switch (v.kind) {
    case VectorKind::kConst:
      return std::nullopt;
    case VectorKind::kCarry: {
      const auto c = carries.find(v.ref);
      return c == carries.end() ? std::nullopt : c->second;
    }
    case VectorKind::kLoadSmem:
    case VectorKind::kLoadInput:
      if (v.kind == VectorKind::kLoadSmem && v.smem_transforms.any()) {
        // _get_lowering_rule: the swizzle, then the tiling; load_tiled in the WGMMA layout.
        const SmemTransforms& t = v.smem_transforms;
        if (lane && t.swizzle == 0) meet(RuleId::kLowerVectorTilingWithoutSwizzle);
        if (lane && t.tiling.empty()) meet(RuleId::kLowerVectorSwizzleStrided);
        if (lane && t.tiling.size() != 2) meet(RuleId::kLowerVectorTilingRank);
        if (lane && !wgmma_tiling_applies(shape)) meet(RuleId::kLowerVectorWgmmaTiling);
        return kWgmmaLayout;
      }
      if (lane && elements % 128 != 0) meet(RuleId::kLowerVectorStridedElements);
      return strided_vec_size(dtype_bits(d), elements);
    case VectorKind::kIota:
      if (!v.iota_layout_cast) {
        // _iota_lowering (Lane) has no layout hint; Warpgroup's is the layout inference's.
        if (lane) meet(RuleId::kLowerVectorIotaUncast);
      } else if (elements % (128 * v.iota_vec_size) != 0) {
        meet(RuleId::kLowerVectorIotaLayout);
      }
      return v.iota_vec_size;
    case VectorKind::kConvert:
      return lower_walk(v.args[0], v.from, shape, lane, carries, first);
    case VectorKind::kBroadcast: {
      // FragmentedArray.broadcast_in_dim keeps the operand's registers, tiled (its vec_size).
      const auto vec = lower_walk(v.args[0], d, v.broadcast_shape, lane, carries, first);
      if (lane && !v.broadcast_dims.empty() && !first) {
        first = LowerEvent{RuleId::kLowerVectorBroadcastLayout, &v, shape,
                           fragmented_layout_repr(v.broadcast_shape, vec.value_or(0))};
      }
      if (lane && vec && v.broadcast_dims.empty() &&
          !strided_broadcast_supported(v.broadcast_shape, shape, true))
        meet(RuleId::kLowerVectorStridedBroadcast);
      return vec;
    }
    default: {
      const auto a = lower_walk(v.args[0], d, shape, lane, carries, first);
      const auto b = lower_walk(v.args[1], d, shape, lane, carries, first);
      // _pointwise(restrict_bitwidth=False) of a bitwise op whose left operand is a splat hands
      // the op to its right operand's _pointwise without that argument: on 8 bits it raises too
      // (`jnp.full(s, c) ^ x` does, `x ^ c` does not; both releases).
      if (lane && dtype_bits(d) == 8 && (!is_bitwise(v.kind) || (!a && b)))
        meet(RuleId::kLowerVectorPointwise8Bit);
      if (lane && a && b && *a != *b) meet(RuleId::kLowerVectorIncompatibleLayouts);
      return a ? a : b;
    }
  }
}

// Whether `v` holds a broadcast along dims other than new leading ones or of a size-1 dim.
bool has_other_dims_broadcast(const VectorValue& v) {
  return any_vector_node(v, [](const VectorValue& n) {
    if (n.kind != VectorKind::kBroadcast) return false;
    if (!n.broadcast_dims.empty()) return true;
    for (const std::int64_t d : n.broadcast_shape)
      if (d == 1) return true;
    return false;
  });
}

// any_vector_node with each node's shape: `holds(node, its shape)`, `v` of shape `shape` (a
// broadcast's operand has the broadcast's operand shape, every other operand its node's).
template <typename F>
bool any_shaped_node(const VectorValue& v, const Shape& shape, const F& holds) {
  if (holds(v, shape)) return true;
  const Shape& below = v.kind == VectorKind::kBroadcast ? v.broadcast_shape : shape;
  for (const VectorValue& a : v.args)
    if (any_shaped_node(a, below, holds)) return true;
  return false;
}

// Whether `v` broadcasts a value of its own layout (a load's, an iota's) in a way the strided
// layout does not (along other dims than the trailing ones, or a size-1 dim after a kept one),
// which Warpgroup's layout inference finds no layout for. `shape` is v's.
bool broadcasts_own_layout_unlaid(const VectorValue& v, const Shape& shape) {
  return any_shaped_node(v, shape, [](const VectorValue& n, const Shape& n_shape) {
    return n.kind == VectorKind::kBroadcast && has_own_layout(n.args[0]) &&
           !strided_broadcast_supported(n.broadcast_shape, n_shape, n.broadcast_dims.empty());
  });
}

// Whether `v` (of shape `shape`) holds an iota with no layout cast whose own count is no multiple
// of 128: Warpgroup's layout inference lays it out as a load (strided), and finds no layout.
bool uncast_iota_unlaid(const VectorValue& v, const Shape& shape) {
  return any_shaped_node(v, shape, [](const VectorValue& n, const Shape& n_shape) {
    return n.kind == VectorKind::kIota && !n.iota_layout_cast && element_count(n_shape) % 128 != 0;
  });
}

// Whether `v` holds an iota anywhere.
bool has_iota(const VectorValue& v) {
  return any_vector_node(v, [](const VectorValue& n) { return n.kind == VectorKind::kIota; });
}

// The value's first load in the order Python evaluates the expression (an op's left operand
// first), or nullptr for a value of constants.
const VectorValue* first_load(const VectorValue& v) {
  if (v.kind == VectorKind::kLoadSmem || v.kind == VectorKind::kLoadInput) return &v;
  for (const VectorValue& a : v.args) {
    if (const VectorValue* l = first_load(a)) return l;
  }
  return nullptr;
}

// The value's first load of a peer CTA's SMEM through an indexed ref (`plgpu.cluster_ref(
// smem.at[k], ...)`), in the order Python evaluates it, or nullptr.
const VectorValue* first_indexed_peer_load(const VectorValue& v) {
  if (v.kind == VectorKind::kLoadSmem && !v.cluster_axis.empty() &&
      (!v.smem_index.empty() || v.smem_slot))
    return &v;
  for (const VectorValue& a : v.args) {
    if (const VectorValue* l = first_indexed_peer_load(a)) return l;
  }
  return nullptr;
}

// The MLIR type of the ref a load reads.
std::string load_memref(const Checker& ck, const VectorValue& load, const Scope& scope) {
  if (load.kind == VectorKind::kLoadSmem) {
    // A tiled ref's memref has the tiled shape (Mosaic GPU's TileTransform).
    const Alloc& a = *scope.allocs.at(load.ref);
    return memref_text(a.dtype, tiled_shape(a.shape, a.transforms.tiling),
                       smem_index_entries(load.smem_index, load.smem_slot.has_value()), true,
                       !load.cluster_axis.empty());
  }
  const ArraySpec* x = find_array(ck.c.inputs, load.ref);
  return x ? memref_text(x->dtype, x->shape, load.gmem_index, false) : std::string();
}

// The MLIR type of the ref a store writes.
std::string dst_memref(const Checker& ck, const VectorStore& vs, const Scope& scope) {
  if (vs.to_smem) {
    const Alloc& a = *scope.allocs.at(vs.dst);
    return memref_text(a.dtype, a.shape,
                       smem_index_entries(vs.smem_index, vs.smem_slot.has_value()), true,
                       !vs.cluster_axis.empty());
  }
  const ArraySpec* o = find_array(ck.c.outputs, vs.dst);
  return o ? memref_text(o->dtype, o->shape, vs.dst_index, false) : std::string();
}

// The dtype, shape and element count of what a vector store writes.
struct StoredView {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::int64_t elements = 0;
};
StoredView stored_view(const Checker& ck, const VectorStore& vs, const Scope& scope) {
  StoredView v;
  if (vs.to_smem) {
    const Alloc& a = *scope.allocs.at(vs.dst);
    v.dtype = a.dtype;
    v.shape.assign(a.shape.begin() + static_cast<std::ptrdiff_t>(vs.smem_index.size()),
                   a.shape.end());
  } else if (const ArraySpec* o = find_array(ck.c.outputs, vs.dst)) {
    v.dtype = o->dtype;
    v.shape = resolve_slice(
                  o->shape, vs.dst_index, [](const std::string&) { return 0; }, 0)
                  .shape;
  } else {
    return v;
  }
  v.elements = element_count(v.shape);
  return v;
}

// The lower stage's rules of a vector value of `dtype` and `shape` (a store's, a carry's init or
// next), met at `path`: the first one the walk meets fires, with its holes; where none does, the
// ones it checked are recorded (for `explain`). Returns the value's Lane register layout.
std::optional<std::int64_t> check_value_lowering(Checker& ck, const std::string& path,
                                                 const VectorValue& value, DType dtype,
                                                 const Shape& shape, const Scope& scope,
                                                 const CarryLayouts& carries) {
  constexpr Stage stage = Stage::kLower;
  std::optional<LowerEvent> first;
  const std::optional<std::int64_t> vec =
      lower_walk(value, dtype, shape, ck.lane(), carries, first);
  if (first && first->rule == RuleId::kLowerVectorStridedElements) {
    ck.check(
        RuleId::kLowerVectorStridedElements, true, path,
        [&] {
          return Holes{{"memref", load_memref(ck, *first->node, scope)},
                       {"n", std::to_string(element_count(first->shape))}};
        },
        stage);
  } else if (first && first->rule == RuleId::kLowerVectorBroadcastLayout) {
    ck.check(
        RuleId::kLowerVectorBroadcastLayout, true, path,
        [&] {
          return Holes{{"layout", first->layout}};
        },
        stage);
  } else if (first && first->rule == RuleId::kLowerVectorIotaLayout) {
    ck.check(
        RuleId::kLowerVectorIotaLayout, true, path,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(first->shape)},
                       {"vec", std::to_string(first->node->iota_vec_size)}};
        },
        stage);
  } else if (first && first->rule == RuleId::kLowerVectorTilingRank) {
    ck.check(
        RuleId::kLowerVectorTilingRank, true, path,
        [&] {
          return Holes{{"tiling", py::tuple_of_ints(first->node->smem_transforms.tiling)}};
        },
        stage);
  } else if (first && first->rule == RuleId::kLowerVectorWgmmaTiling) {
    ck.check(
        RuleId::kLowerVectorWgmmaTiling, true, path,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(first->shape)}};
        },
        stage);
  } else if (first) {
    ck.check(first->rule, true, path, stage);
  } else {
    // Nothing met: the rules the walk checked, for `explain`.
    if (has_iota(value)) ck.check(RuleId::kLowerVectorIotaLayout, false, path, stage);
    if (ck.lane() && has_other_dims_broadcast(value)) {
      ck.check(RuleId::kLowerVectorBroadcastLayout, false, path, stage);
      ck.check(RuleId::kLowerVectorStridedBroadcast, false, path, stage);
    }
    if (ck.lane()) {
      ck.check(RuleId::kLowerVectorPointwise8Bit, false, path, stage);
      ck.check(RuleId::kLowerVectorIncompatibleLayouts, false, path, stage);
    }
  }
  return vec;
}

// Whether a vector store meets the WGMMA layout: its value loads a transformed allocation, or it
// stores into one (Warpgroup's layout inference then lays the whole value out as WGMMA).
bool meets_wgmma(const VectorStore& vs) {
  return loads_transformed_smem(vs.value) || (vs.to_smem && vs.smem_transforms.any());
}

// Whether Warpgroup's layout inference finds the WGMMA layout for a transformed ref of `shape`: a
// tiling and a swizzle, its rows in 64s.
bool wgmma_ref_laid(const SmemTransforms& t, const Shape& shape) {
  return !t.tiling.empty() && t.swizzle != 0 && wgmma_tiling_applies(shape);
}

// Whether a store that meets the WGMMA layout has a transformed ref (of the store's shape: such a
// value holds no broadcast) the layout inference finds no layout for.
bool wgmma_unlaid(const VectorStore& vs, const Shape& shape) {
  if (vs.to_smem && vs.smem_transforms.any() && !wgmma_ref_laid(vs.smem_transforms, shape))
    return true;
  return any_vector_node(vs.value, [&](const VectorValue& n) {
    return n.kind == VectorKind::kLoadSmem && n.smem_transforms.any() &&
           !wgmma_ref_laid(n.smem_transforms, shape);
  });
}

// Warpgroup's dialect lowering of a value laid out as WGMMA, its ops in the jaxpr's order (an
// op's operands before it, the left one first): a peer CTA's SMEM through an indexed ref (0.11.2),
// a GMEM load (0.11.2 refuses it; 0.12.0.1 plans its transfer), 8-bit arithmetic.
void dialect_wgmma_value(Checker& ck, const std::string& path, const VectorValue& v, DType d,
                         const Scope& scope) {
  constexpr Stage stage = Stage::kDialect;
  if (v.kind == VectorKind::kConvert) {
    dialect_wgmma_value(ck, path, v.args[0], v.from, scope);
    return;
  }
  for (const VectorValue& a : v.args) dialect_wgmma_value(ck, path, a, d, scope);
  if (v.kind == VectorKind::kLoadSmem && !v.cluster_axis.empty() &&
      (!v.smem_index.empty() || v.smem_slot)) {
    ck.check(RuleId::kDialectClusterRefIndexed, true, path, [&] {
      return Holes{{"memref", load_memref(ck, v, scope)}};
    });
  } else if (v.kind == VectorKind::kLoadInput) {
    ck.check(RuleId::kDialectVectorGmemOptimized, true, path);
    const ArraySpec* x = find_array(ck.c.inputs, v.ref);
    const auto reason = wgmma_gmem_slice_error(x->shape, v.gmem_index, dtype_bits(d));
    ck.check(
        RuleId::kLowerVectorGmemTransferPlan, reason.has_value(), path,
        [&] {
          return Holes{{"reason", reason.value_or("")}};
        },
        stage);
  } else if (dtype_bits(d) == 8 && binary_vector_op_name(v.kind) && !is_bitwise(v.kind)) {
    ck.check(RuleId::kLowerVectorPointwise8Bit, true, path, stage);
  }
}

// JAX 0.12.0.1's transfer plan of a WGMMA-layout value stored into the output slice (stage: the
// semantics' place of the store).
void check_wgmma_gmem_store(Checker& ck, const Op& op, const VectorStore& vs, DType dtype,
                            Stage stage) {
  const ArraySpec* o = find_array(ck.c.outputs, vs.dst);
  const auto reason = wgmma_gmem_slice_error(o->shape, vs.dst_index, dtype_bits(dtype));
  ck.check(
      RuleId::kLowerVectorGmemTransferPlan, reason.has_value(), op.path,
      [&] {
        return Holes{{"reason", reason.value_or("")}};
      },
      stage);
}

// The tree mgpu.fori compares for a carried FragmentedArray of `shape` and `dtype` whose layout
// has vector length `vec` (nullopt: a splat): PyTreeDef([CustomNode(FragmentedArray[(layout,
// registers' shape, is_signed)], [one * per register])]).
std::string carry_tree(const Shape& shape, DType dtype, std::optional<std::int64_t> vec) {
  const std::int64_t registers = vec ? element_count(shape) / (128 * *vec) : 1;
  std::string stars;
  for (std::int64_t r = 0; r < registers; ++r) stars += r ? ", *" : "*";
  const DTypeInfo& info = dtype_info(dtype);
  const char* is_signed = info.is_float ? "None" : info.is_signed ? "True" : "False";
  return "PyTreeDef([CustomNode(FragmentedArray[(" +
         fragmented_layout_repr(shape, vec.value_or(0)) + ", " +
         (vec ? "(" + std::to_string(registers) + ",)" : std::string("()")) + ", " + is_signed +
         ")], [" + stars + "])])";
}

}  // namespace

void check_vector_layout_inference(Checker& ck) {
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    if (const auto* l = std::get_if<Loop>(&op.v); l && l->carry) {
      // A carry's values: a multiple of 128 elements, laid out unless they hold an uncast iota
      // of another count or a broadcast the strided layout does not hold.
      for (const VectorValue* v : {&l->carry->init, &l->carry->next}) {
        ck.check(RuleId::kDialectLayoutInference, uncast_iota_unlaid(*v, l->carry->shape), op.path);
        if (has_other_dims_broadcast(*v)) {
          ck.check(RuleId::kDialectBroadcastLayout,
                   broadcasts_own_layout_unlaid(*v, l->carry->shape), op.path);
        }
      }
    }
    const auto* vs = std::get_if<VectorStore>(&op.v);
    if (!vs) return;
    const StoredView view = stored_view(ck, *vs, scope);
    ck.check(RuleId::kDialectLayoutInference,
             (view.elements % 128 != 0 && first_load(vs->value) != nullptr) ||
                 uncast_iota_unlaid(vs->value, view.shape) ||
                 (meets_wgmma(*vs) && wgmma_unlaid(*vs, view.shape)),
             op.path);
    if (has_other_dims_broadcast(vs->value)) {
      ck.check(RuleId::kDialectBroadcastLayout, broadcasts_own_layout_unlaid(vs->value, view.shape),
               op.path);
    }
  });
}

void check_vector_store_lowering(Checker& ck, const Op& op, const VectorStore& vs,
                                 const Scope& scope, Stage stage, const CarryLayouts& carries) {
  const StoredView view = stored_view(ck, vs, scope);
  const DType dtype = view.dtype;
  const std::int64_t elements = view.elements;
  const bool splat = !has_own_layout(vs.value);
  // JAX 0.11.2 (the rule's until): a value of constants is stored through a splat layout whose
  // vec_size must divide the count (the store's lowering: Lane here, Warpgroup in the dialect).
  const auto splat_vec_size = [&] {
    if (!splat) return;
    const std::int64_t vec = splat_store_vec_size_0_11_2(dtype_bits(dtype), elements);
    ck.check(
        RuleId::kLowerVectorSplatVecSize, elements % (vec * 128) != 0, op.path,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(view.shape)}, {"vec", std::to_string(vec)}};
        },
        stage);
  };
  // n: the ref's element count (a load below a broadcast reads fewer than the store writes).
  const auto strided = [&](const std::string& memref, std::int64_t n) {
    ck.check(
        RuleId::kLowerVectorStridedElements, true, op.path,
        [&] {
          return Holes{{"memref", memref}, {"n", std::to_string(n)}};
        },
        stage);
  };
  if (stage == Stage::kLower) {
    const std::optional<std::int64_t> vec =
        check_value_lowering(ck, op.path, vs.value, dtype, view.shape, scope, carries);
    if (!ck.lane()) return;  // Warpgroup: the rest in the layout inference and the dialect
    const bool wgmma = vec == kWgmmaLayout;
    if (vs.to_smem && vs.smem_transforms.any()) {
      // _swap_lowering_rule into a transformed ref: the swizzle, the tiling, then the old value's
      // load_tiled in the value's layout.
      const SmemTransforms& t = vs.smem_transforms;
      ck.check(RuleId::kLowerVectorTilingWithoutSwizzle, t.swizzle == 0, op.path, stage);
      if (t.tiling.empty()) {
        ck.check(RuleId::kLowerVectorSwizzleStrided, !wgmma, op.path, stage);
        return;
      }
      ck.check(
          RuleId::kLowerVectorTilingRank, t.tiling.size() != 2, op.path,
          [&] {
            return Holes{{"tiling", py::tuple_of_ints(t.tiling)}};
          },
          stage);
      ck.check(
          RuleId::kLowerVectorTiledStoreLayout, !wgmma, op.path,
          [&] {
            return Holes{{"layout", fragmented_layout_repr(view.shape, vec.value_or(0))}};
          },
          stage);
      return;
    }
    if (wgmma) {
      // Into GMEM (the parser keeps a WGMMA value out of untransformed SMEM): store_untiled.
      check_wgmma_gmem_store(ck, op, vs, dtype, stage);
      return;
    }
    // _swap_lowering_rule reads the destination's old value (load_strided), then stores.
    if (elements % 128 != 0) strided(dst_memref(ck, vs, scope), elements);
    splat_vec_size();
    return;
  }
  // Warpgroup's dialect lowering. A value that loads a ref has failed the layout inference
  // already where the count is no multiple of 128 (check_vector_layout_inference), one with an
  // iota the lower stage; a value of constants keeps the splat layout, which the store refuses.
  // The store's own lowering refuses a peer's SMEM before it stores anything.
  const bool to_peer = vs.to_smem && !vs.cluster_axis.empty();
  if (meets_wgmma(vs)) {
    // Laid out as WGMMA (check_vector_layout_inference refused what it cannot lay out).
    dialect_wgmma_value(ck, op.path, vs.value, dtype, scope);
    ck.check(RuleId::kDialectClusterStore, to_peer, op.path);
    if (!vs.to_smem) check_wgmma_gmem_store(ck, op, vs, dtype, stage);
    return;
  }
  if (elements % 128 != 0) {
    ck.check(RuleId::kDialectClusterStore, to_peer, op.path);
    ck.check(RuleId::kDialectSplatStoreCount, splat, op.path);
    return;
  }
  // The value's loads lower first: 0.11.2 refuses a peer's SMEM through an indexed ref.
  if (const VectorValue* peer = first_indexed_peer_load(vs.value)) {
    ck.check(RuleId::kDialectClusterRefIndexed, true, op.path, [&] {
      return Holes{{"memref", load_memref(ck, *peer, scope)}};
    });
  }
  // Any add, sub, mul, min, max or shift (FragmentedArray.min/max call _pointwise too).
  ck.check(RuleId::kLowerVectorPointwise8Bit, computes_8bit_arithmetic(vs.value, dtype), op.path,
           stage);
  ck.check(RuleId::kDialectClusterStore, to_peer, op.path);
  splat_vec_size();
}

void check_loop_carry_lowering(Checker& ck, const Op& op, const Scope& scope, Stage stage,
                               bool after_body, CarryLayouts& carries) {
  const auto* loop = std::get_if<Loop>(&op.v);
  if (!loop || !loop->carry) return;
  const Loop::Carry& c = *loop->carry;
  const VectorValue& value = after_body ? c.next : c.init;
  if (stage == Stage::kDialect) {
    // Warpgroup's dialect lowering of the value's ops, in program order (init's before the body's
    // ops, next's after them): its loads first.
    if (const VectorValue* peer = first_indexed_peer_load(value)) {
      ck.check(RuleId::kDialectClusterRefIndexed, true, op.path, [&] {
        return Holes{{"memref", load_memref(ck, *peer, scope)}};
      });
    }
    ck.check(RuleId::kLowerVectorPointwise8Bit, computes_8bit_arithmetic(value, c.dtype), op.path,
             stage);
    return;
  }
  const std::optional<std::int64_t> vec =
      check_value_lowering(ck, op.path, value, c.dtype, c.shape, scope, carries);
  if (after_body && ck.lane() && (loop->nd || loop->trip_count > 1)) {
    // mgpu.fori: the body's result has init's tree, or ValueError(new_treedef, treedef). A loop
    // of one static trip is unrolled and compares nothing; an nd_loop's count is dynamic.
    const std::optional<std::int64_t> init = carries[c.name];
    ck.check(
        RuleId::kLowerLoopCarryLayout, vec != init, op.path,
        [&] {
          return Holes{{"next", carry_tree(c.shape, c.dtype, vec)},
                       {"init", carry_tree(c.shape, c.dtype, init)}};
        },
        stage);
  }
  // Inside the loop the carry has init's layout; after it, the result has next's.
  carries[c.name] = vec;
}

}  // namespace collfuzz::ref
