// The rules of vector values (docs/case-format.md, "vector_store"): what Mosaic GPU's lowering of
// a vector store's value refuses (FragmentedArray._pointwise), in both releases alike.

#include <optional>

#include "harness/core/ndarray.h"
#include "harness/core/vector_layout.h"
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

}  // namespace

void check_vector_store_lowering(Checker& ck, const Op& op, const VectorStore& vs,
                                 const Scope& scope, Stage stage) {
  DType dtype = DType::kFloat32;
  std::int64_t elements = 0;
  if (vs.to_smem) {
    const Alloc& a = *scope.allocs.at(vs.dst);
    dtype = a.dtype;
    elements = 1;
    for (std::size_t k = vs.smem_index.size(); k < a.shape.size(); ++k) elements *= a.shape[k];
  } else {
    for (const auto& o : ck.c.outputs) {
      if (o.name != vs.dst) continue;
      dtype = o.dtype;
      elements = element_count(resolve_slice(
                                   o.shape, vs.dst_index, [](const std::string&) { return 0; }, 0)
                                   .shape);
    }
  }
  // Under Lane, a binary op on a converted value and a value of another register layout: the
  // op's lowering rule (stage lower). Warpgroup's layout inference gives both the same layout.
  bool conflict = false;
  if (stage == Stage::kLower) lane_vec_size(vs.value, dtype, elements, conflict);
  ck.check(RuleId::kLowerVectorIncompatibleLayouts, conflict, op.path, stage);
  // Any add, sub, mul, min or max (FragmentedArray.min/max call _pointwise too): the value's
  // root is one when it is not a leaf.
  ck.check(RuleId::kLowerVectorPointwise8Bit, dtype_bits(dtype) == 8 && !vs.value.args.empty(),
           op.path, stage);
}

}  // namespace collfuzz::ref
