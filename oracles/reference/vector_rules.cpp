// The rules of vector values (docs/case-format.md, "vector_store"): what Mosaic GPU's lowering of
// a vector store's value refuses (FragmentedArray._pointwise, the strided layout's element count,
// Warpgroup's layout inference and splat stores), in both releases alike.

#include <optional>

#include "harness/core/memref_text.h"
#include "harness/core/ndarray.h"
#include "harness/core/outcome_json.h"
#include "harness/core/pyrepr.h"
#include "harness/core/vector_layout.h"
#include "harness/core/vector_ops.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

// The register vector length of `v` (of dtype `d`, `elements` elements) under Lane semantics:
// a load's ref dtype's, a conversion's operand's, a binary op's non-constant operands'; nullopt
// for a constant (a splat takes the other operand's layout). Sets `conflict` at a binary op whose
// two operands disagree (FragmentedArray._pointwise: "Incompatible FragmentedArray layouts").
std::optional<std::int64_t> lane_vec_size(const VectorValue& v, DType d, std::int64_t elements,
                                          bool& conflict) {
  switch (v.kind) {
    case VectorKind::kConst:
      return std::nullopt;
    case VectorKind::kLoadSmem:
    case VectorKind::kLoadInput:
      return strided_vec_size(dtype_bits(d), elements);
    case VectorKind::kConvert:
      return lane_vec_size(v.args[0], v.from, elements, conflict);
    default: {
      const auto a = lane_vec_size(v.args[0], d, elements, conflict);
      const auto b = lane_vec_size(v.args[1], d, elements, conflict);
      if (a && b && *a != *b) conflict = true;
      return a ? a : b;
    }
  }
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

// The MLIR type of the ref a load reads.
std::string load_memref(const Checker& ck, const VectorValue& load, const Scope& scope) {
  if (load.kind == VectorKind::kLoadSmem) {
    const Alloc& a = *scope.allocs.at(load.ref);
    return memref_text(a.dtype, a.shape,
                       smem_index_entries(load.smem_index, load.smem_slot.has_value()), true);
  }
  const ArraySpec* x = find_array(ck.c.inputs, load.ref);
  return x ? memref_text(x->dtype, x->shape, load.gmem_index, false) : std::string();
}

// The MLIR type of the ref a store writes.
std::string dst_memref(const Checker& ck, const VectorStore& vs, const Scope& scope) {
  if (vs.to_smem) {
    const Alloc& a = *scope.allocs.at(vs.dst);
    return memref_text(a.dtype, a.shape,
                       smem_index_entries(vs.smem_index, vs.smem_slot.has_value()), true);
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

}  // namespace

void check_vector_layout_inference(Checker& ck) {
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    const auto* vs = std::get_if<VectorStore>(&op.v);
    if (!vs) return;
    const std::int64_t elements = stored_view(ck, *vs, scope).elements;
    ck.check(RuleId::kDialectLayoutInference,
             elements % 128 != 0 && first_load(vs->value) != nullptr, op.path);
  });
}

void check_vector_store_lowering(Checker& ck, const Op& op, const VectorStore& vs,
                                 const Scope& scope, Stage stage) {
  const StoredView view = stored_view(ck, vs, scope);
  const DType dtype = view.dtype;
  const std::int64_t elements = view.elements;
  const bool eight_bit_op = dtype_bits(dtype) == 8 && computes_arithmetic(vs.value);
  if (elements % 128 != 0) {
    const VectorValue* load = first_load(vs.value);
    if (stage == Stage::kDialect) {
      // A value of constants keeps the splat layout (one that loads has failed the layout
      // inference already: check_vector_layout_inference).
      ck.check(RuleId::kDialectSplatStoreCount, load == nullptr, op.path);
      return;
    }
    // Lane: the value's first load raises in its own lowering rule, before any op on it; a value
    // of constants computes (the 8-bit rule) and the store then reads its destination.
    const auto strided = [&](const std::string& memref) {
      ck.check(
          RuleId::kLowerVectorStridedElements, true, op.path,
          [&] {
            return Holes{{"memref", memref}, {"n", std::to_string(elements)}};
          },
          stage);
    };
    if (load) strided(load_memref(ck, *load, scope));
    ck.check(RuleId::kLowerVectorPointwise8Bit, eight_bit_op, op.path, stage);
    strided(dst_memref(ck, vs, scope));
  }
  // Under Lane, a binary op on a converted value and a value of another register layout: the
  // op's lowering rule (stage lower). Warpgroup's layout inference gives both the same layout.
  bool conflict = false;
  if (stage == Stage::kLower) lane_vec_size(vs.value, dtype, elements, conflict);
  ck.check(RuleId::kLowerVectorIncompatibleLayouts, conflict, op.path, stage);
  // Any add, sub, mul, min or max (FragmentedArray.min/max call _pointwise too).
  ck.check(RuleId::kLowerVectorPointwise8Bit, eight_bit_op, op.path, stage);
  // JAX 0.11.2 (the rule's until): a value of constants is stored through a splat layout whose
  // vec_size must divide the count.
  if (first_load(vs.value) == nullptr) {
    const std::int64_t vec = splat_store_vec_size_0_11_2(dtype_bits(dtype), elements);
    ck.check(
        RuleId::kLowerVectorSplatVecSize, elements % (vec * 128) != 0, op.path,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(view.shape)}, {"vec", std::to_string(vec)}};
        },
        stage);
  }
}

}  // namespace collfuzz::ref
