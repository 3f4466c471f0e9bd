#include "harness/lowering/wgmma_vectors.h"

#include "harness/core/memref_text.h"
#include "harness/core/pyrepr.h"
#include "harness/core/vector_layout.h"
#include "harness/core/vector_ops.h"
#include "harness/core/wgmma_transfer.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"
#include "harness/lowering/value_eqns.h"

namespace collfuzz::lowering {
namespace {

// Whether the layout inference lays a transformed ref of `shape` out as WGMMA.
bool wgmma_laid(const SmemTransforms& t, const Shape& shape) {
  return !t.tiling.empty() && t.swizzle != 0 && wgmma_tiling_applies(shape);
}

// JAX 0.12.0.1's plan_gmem_transfer of a WGMMA value of `dtype` to or from a slice of `array`.
std::optional<IrError> gmem_plan_error(const ArraySpec& array, const std::vector<IndexEntry>& index,
                                       DType dtype) {
  const auto reason = wgmma_gmem_slice_error(array.shape, index, dtype_bits(dtype));
  if (!reason) return std::nullopt;
  return IrError{"TransferPlanDerivationError", *reason, rule_id::kGmemTransferPlan};
}

}  // namespace

SmemLayout ref_layout(const Alloc& a, std::size_t leading) {
  SmemLayout l = smem_layout(a);
  l.shape.erase(l.shape.begin(), l.shape.begin() + static_cast<std::ptrdiff_t>(leading));
  return l;
}

std::int64_t lane_transformed_load(const VectorValue& load, const Shape& shape,
                                   const std::string& path) {
  const SmemTransforms& t = load.smem_transforms;
  if (t.swizzle == 0) {
    raise(Stage::kLower, "NotImplementedError", "Tiling without swizzle is not supported.",
          rule_id::kTilingWithoutSwizzle, path);
  }
  if (t.tiling.empty()) {
    raise(Stage::kLower, "NotImplementedError", "Unsupported swizzle transform with strided layout",
          rule_id::kSwizzleStrided, path);
  }
  if (t.tiling.size() != 2) {
    raise(Stage::kLower, "NotImplementedError",
          "Only 2D tiling is supported, got: " + py::tuple_of_ints(t.tiling), rule_id::kTilingRank,
          path);
  }
  if (!wgmma_tiling_applies(shape))
    raise(Stage::kLower, "ValueError", wgmma_tiling_error(shape), rule_id::kWgmmaTiling, path);
  return kWgmmaLayout;
}

bool lane_wgmma_store(const Case& c, const VectorStore& vs, const IrVectorStore& iv,
                      std::int64_t vec, const std::string& path) {
  if (vs.to_smem && vs.smem_transforms.any()) {
    const SmemTransforms& t = vs.smem_transforms;
    if (t.swizzle == 0) {
      raise(Stage::kLower, "NotImplementedError", "Tiling without swizzle is not supported.",
            rule_id::kTilingWithoutSwizzle, path);
    }
    if (t.tiling.empty()) {
      // The untiled path: a strided or splat value with a swizzle (a WGMMA one is not in the
      // case language).
      raise(Stage::kLower, "NotImplementedError",
            "Unsupported swizzle transform with strided layout", rule_id::kSwizzleStrided, path);
    }
    if (t.tiling.size() != 2) {
      raise(Stage::kLower, "NotImplementedError",
            "Only 2D tiling is supported, got: " + py::tuple_of_ints(t.tiling),
            rule_id::kTilingRank, path);
    }
    // The old value's load_tiled in the value's layout: NotImplementedError(layout).
    if (vec != kWgmmaLayout) {
      raise(Stage::kLower, "NotImplementedError", fragmented_layout_repr(iv.shape, vec),
            rule_id::kTiledStoreLayout, path);
    }
    return true;
  }
  if (vec != kWgmmaLayout) return false;
  // Into GMEM: store_untiled of the WGMMA layout (0.12.0.1 plans it).
  if (jax_facts(c.target.jax).gmem_transfer_plan) {
    const ArraySpec& out = c.outputs[static_cast<std::size_t>(iv.output)];
    if (const auto e = gmem_plan_error(out, vs.dst_index, iv.dtype))
      raise(Stage::kLower, e->exception.c_str(), e->message, e->rule, path);
  }
  return true;
}

void warpgroup_wgmma_store(const Case& c, const CaseLookup& lookup, const VectorStore& vs,
                           DType dtype, IrVectorStore& iv) {
  const bool into = vs.to_smem && vs.smem_transforms.any();
  iv.wgmma = into || loads_transformed_smem(vs.value);
  if (!iv.wgmma) return;
  const JaxFacts facts = jax_facts(c.target.jax);
  iv.wgmma_unlaid = into && !wgmma_laid(vs.smem_transforms, iv.shape);
  std::vector<ValueEqn> eqns;
  value_eqns(vs.value, dtype, iv.shape, eqns);
  for (const ValueEqn& q : eqns) {
    const VectorValue& v = *q.v;
    const DType d = q.dtype;
    if (v.kind == VectorKind::kLoadSmem && v.smem_transforms.any() &&
        !wgmma_laid(v.smem_transforms, iv.shape))
      iv.wgmma_unlaid = true;
    if (iv.wgmma_value_error) continue;
    if (v.kind == VectorKind::kLoadInput) {
      if (!facts.gmem_transfer_plan) {
        iv.wgmma_value_error =
            IrError{"NotImplementedError", "Only optimized transfers to SMEM supported",
                    rule_id::kGmemOptimized};
      } else {
        iv.wgmma_value_error = gmem_plan_error(*lookup.input(v.ref), v.gmem_index, d);
      }
    } else if (v.kind == VectorKind::kLoadSmem && !v.cluster_axis.empty() &&
               (!v.smem_index.empty() || v.smem_slot) && !facts.indexed_cluster_ref_loads) {
      const Alloc& a = *lookup.alloc(v.ref);
      iv.wgmma_value_error = IrError{
          "ValueError",
          "Expected type " +
              memref_text(a.dtype, tiled_shape(a.shape, a.transforms.tiling),
                          smem_index_entries(v.smem_index, v.smem_slot.has_value()), true, true) +
              " for value OpResult(",
          rule_id::kClusterRefIndexedType};
    } else if (dtype_bits(d) == 8 && binary_vector_op_name(v.kind) && !is_bitwise(v.kind)) {
      iv.wgmma_value_error =
          IrError{"NotImplementedError", kPointwise8BitMessage, rule_id::kVectorPointwise8Bit};
    }
  }
  if (!vs.to_smem && facts.gmem_transfer_plan)
    iv.wgmma_store_error = gmem_plan_error(*lookup.output(vs.dst), vs.dst_index, dtype);
}

}  // namespace collfuzz::lowering
