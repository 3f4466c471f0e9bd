// The destination of a generated copy as its SMEM choice shapes it (copy_plan.h SmemChoice):
// the transforms of its allocation, the shape they need, and a slice of the ref.
#pragma once

#include <optional>

#include "generators/axis_environment.h"
#include "generators/copy_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// The transforms of the copy's destination allocation; reshapes `dst` (the ref's shape) to what
// they need: (8 * row_tiles, S * 8 // bits) rows and minor dim (a multiple of `split` rows in a
// clean plan). None on the cp.async path (`tma` false) or for sub-byte dtypes.
SmemTransforms smem_transforms_for(const SmemChoice& c, DType dtype, bool tma, bool clean,
                                   std::int64_t split, Shape& dst);

// The slice `dst.at[pl.ds(start, rows)]` of an allocation of `alloc_rows` rows (set here), for a
// transformed destination of `rows` leading rows; nullopt for none. Slices start on a whole
// swizzle pattern (8 rows), so every TMA into them lands aligned; a misaligned one only where the
// tiling refuses it (a clean plan has none).
std::optional<IndexEntry> smem_slice_for(const SmemChoice& c, const SmemTransforms& t,
                                         std::int64_t rows, const std::optional<NamedAxis>& axis,
                                         bool clean, std::int64_t& alloc_rows);

}  // namespace collfuzz::generators
