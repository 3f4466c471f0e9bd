#include "generators/smem_shape.h"

#include "harness/core/dtype.h"

namespace collfuzz::generators {

SmemTransforms smem_transforms_for(const SmemChoice& c, DType dtype, bool tma, bool clean,
                                   std::int64_t split, Shape& dst) {
  SmemTransforms t;
  using K = SmemTransformKind;
  K kind = c.transform;
  const int bits = dtype_bits(dtype);
  if (kind == K::kNone || !tma || bits % 8 != 0) return t;
  if (clean && kind != K::kTiledSwizzled && kind != K::kTiled && kind != K::kSwizzled)
    kind = K::kTiledSwizzled;
  const std::int64_t elems = c.swizzle * 8 / bits;
  std::int64_t rows = 8 * c.row_tiles;
  // A clean multicast splits the rows (never the swizzled minor dim): whole tiles per CTA.
  if (clean) rows = 8 * std::max<std::int64_t>(c.row_tiles, split);
  if (c.wgmma_rows) rows = (rows + 63) / 64 * 64;
  if (kind == K::kTilingNotDividing) rows += 4;
  dst = Shape{rows, elems};
  switch (kind) {
    case K::kTiledSwizzled:
    case K::kTilingNotDividing:
      t.tiling = {8, elems};
      t.swizzle = c.swizzle;
      break;
    case K::kTiled:
      t.tiling = {8, elems};
      break;
    case K::kSwizzled:
      t.swizzle = c.swizzle;
      break;
    case K::kBadSwizzle:
      t.tiling = {8, elems};
      t.swizzle = 16;
      break;
    case K::kTiledMinor:
      t.tiling = {elems};
      t.swizzle = c.swizzle;
      break;
    case K::kSwizzleMinorMismatch:
      t.tiling = {8, std::max<std::int64_t>(1, elems / 2)};
      t.swizzle = c.swizzle;
      break;
    case K::kNone:
      break;
  }
  return t;
}

std::optional<IndexEntry> smem_slice_for(const SmemChoice& c, const SmemTransforms& t,
                                         std::int64_t rows, const std::optional<NamedAxis>& axis,
                                         bool clean, std::int64_t& alloc_rows) {
  alloc_rows = rows;
  if (!t.any() || c.slice == SmemSliceKind::kNone || rows % 8 != 0) return std::nullopt;
  SmemSliceKind kind = c.slice;
  if (kind == SmemSliceKind::kMisaligned && (clean || t.tiling.empty()))
    kind = SmemSliceKind::kStatic;
  if (kind == SmemSliceKind::kPerCta && !axis) kind = SmemSliceKind::kStatic;
  IndexEntry e;
  e.kind = IndexEntry::Kind::kSlice;
  e.size = rows;
  switch (kind) {
    case SmemSliceKind::kStatic:
      alloc_rows = 2 * rows;
      e.start = rows;
      break;
    case SmemSliceKind::kMisaligned:
      alloc_rows = 2 * rows;
      e.start = 4;
      break;
    case SmemSliceKind::kPerCta:
      alloc_rows = rows * axis->size;
      e.dyn_start = DynStart{axis->name.as_plain(), rows, 0};
      break;
    case SmemSliceKind::kNone:
      return std::nullopt;
  }
  return e;
}

}  // namespace collfuzz::generators
