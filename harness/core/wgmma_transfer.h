// Mosaic GPU's WGMMA register layout (fragmented_array.py's WGMMA_LAYOUT, both releases): the
// layout a vector load of a tiled and swizzled SMEM ref gets (FragmentedArray.load_tiled), and
// what JAX 0.12.0.1 asks of a GMEM ref that such a value is stored to or loaded from
// (plan_gmem_transfer: whole 32-byte sectors per warp, whole 128-byte cache lines per warpgroup).
// Shared by the reference's rules and the lowering as the strided layout is
// (harness/core/vector_layout.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

// The register layout a FragmentedArray of the WGMMA layout has, as the Lane model writes layouts
// (harness/core/vector_layout.h: a strided layout's vec_size, 0 for a splat).
inline constexpr std::int64_t kWgmmaLayout = -1;

// Whether Tiling(((64, 8), (16, 8), (8, 8), (2,))) applies to `shape` (rank 2 or more, the last
// two dims multiples of 64 and 8).
bool wgmma_tiling_applies(const Shape& shape);

// Tiling.tile_nested_shape_strides's ValueError for `shape`:
// "Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape (8, 32)".
std::string wgmma_tiling_error(const Shape& shape);

// JAX 0.12.0.1's plan_gmem_transfer for a WGMMA-layout value of `element_bits` moved to or from
// a GMEM ref of `shape` and (element) `strides`, as FragmentedArray.store_untiled/load_untiled
// reshape it (one level of tiling of every dim): the TransferPlanDerivationError's message, or
// nullopt where a plan is found. The shape must be one wgmma_tiling_applies to.
std::optional<std::string> wgmma_gmem_transfer_error(const Shape& shape,
                                                     const std::vector<std::int64_t>& strides,
                                                     int element_bits);

// wgmma_gmem_transfer_error for the slice `index` of a row-major GMEM array of `array_shape` (a
// vector store's destination, a vector load's input; the slice's strides are the array's along
// the dims it keeps).
std::optional<std::string> wgmma_gmem_slice_error(const Shape& array_shape,
                                                  const std::vector<IndexEntry>& index,
                                                  int element_bits);

}  // namespace collfuzz
