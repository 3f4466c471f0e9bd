// Rule family: plgpu.try_cluster_cancel (docs/case-format.md, "try_cluster_cancel"), from
// try_cluster_cancel_lowering (pallas/mosaic_gpu/primitives.py, 0.11.2 and 0.12.0.1 alike).
#include "harness/core/memref_text.h"
#include "harness/core/ndarray.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_try_cluster_cancel_lowering(Checker& ck, const Op& op, const TryClusterCancel& tc,
                                       const Scope& scope) {
  // `bits = math.prod(result_ty.shape) * mgpu.bitwidth(result_ty.element_type)`, after the
  // barrier's index is taken.
  const Alloc& result = *scope.allocs.at(tc.result);
  const std::int64_t bits =
      element_count(cancel_result_shape(tc, result)) * dtype_bits(result.dtype);
  ck.check(RuleId::kLowerTryClusterCancelBits, bits != 128, op.path, [&] {
    return Holes{{"bits", std::to_string(bits)}};
  });
}

void check_try_cluster_cancel_verify(Checker& ck, const Op& op, const TryClusterCancel& tc,
                                     const Scope& scope) {
  // Warpgroup: mgpu.dialect.try_cluster_cancel(result_ref, ...), whose verifier takes a 1-D
  // memref of i8 only (int8 and uint8 are both signless i8 in MLIR).
  if (ck.lane()) return;
  const Alloc& result = *scope.allocs.at(tc.result);
  const bool i8 = result.dtype == DType::kInt8 || result.dtype == DType::kUInt8;
  const bool one_d = cancel_result_shape(tc, result).size() == 1;
  ck.check(RuleId::kVerifyTryClusterCancelResult, !one_d || !i8, op.path, [&] {
    return Holes{{"memref", memref_text(result.dtype, result.shape,
                                        smem_index_entries(tc.result_index, false), true)}};
  });
}

}  // namespace collfuzz::ref
