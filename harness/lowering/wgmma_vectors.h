// The lowering of vector values that meet the WGMMA layout: loads of a transformed SMEM ref and
// stores into one (docs/case-format.md, "Vector values of transformed refs"). Under Lane,
// _get_lowering_rule and _swap_lowering_rule (the swizzle, the tiling, load_tiled in the WGMMA
// layout, a tiled store's old value loaded in the stored value's layout) and JAX 0.12.0.1's GMEM
// transfer plan of a WGMMA value's store; under Warpgroup, what the layout inference and the
// dialect lowering make of a value laid out as WGMMA.
#pragma once

#include <cstdint>
#include <string>

#include "harness/core/case.h"
#include "harness/core/smem_layout.h"
#include "harness/lowering/case_lookup.h"
#include "harness/lowering/kernel_ir.h"

namespace collfuzz::lowering {

// The layout of the ref `a.at[i_0, ..., i_leading-1]` of an SMEM allocation (its transforms
// tile trailing dims only, so a leading index's block is laid out as a buffer of its own shape).
SmemLayout ref_layout(const Alloc& a, std::size_t leading);

// Lane: a load of the transformed ref `load` (of the value's `shape`): raises what
// _get_lowering_rule raises, else returns the WGMMA layout (kWgmmaLayout).
std::int64_t lane_transformed_load(const VectorValue& load, const Shape& shape,
                                   const std::string& path);

// Lane: the store `vs` of a value of layout `vec` (kWgmmaLayout, a strided vec_size, 0 for a
// splat) into a transformed ref, or of a WGMMA value into GMEM: raises what _swap_lowering_rule
// raises. Returns whether the store was one of those (the strided store's rules then do not
// apply).
bool lane_wgmma_store(const Case& c, const VectorStore& vs, const IrVectorStore& iv,
                      std::int64_t vec, const std::string& path);

// Warpgroup: fills iv.wgmma, iv.wgmma_unlaid and the dialect lowering's errors for the store
// `vs` of `dtype` (dialect_stage.cpp raises them in program order).
void warpgroup_wgmma_store(const Case& c, const CaseLookup& lookup, const VectorStore& vs,
                           DType dtype, IrVectorStore& iv);

}  // namespace collfuzz::lowering
