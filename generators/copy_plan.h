// A generated copy_gmem_to_smem, as choices made without knowing the mesh or the target, from
// which program_builder derives the copy, its source array and index, and its destination
// allocation consistently (so that shrinking one choice keeps the rest of the copy well formed).
#pragma once

#include <cstdint>
#include <optional>

#include "generators/axis_choice.h"
#include "generators/cond_choice.h"
#include "generators/shape_choice.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

enum class CopyMode : std::uint8_t { kPlain, kMulticast, kPartitioned, kReplicated };

// How the source array relates to the slice the copy reads.
enum class SrcLayout : std::uint8_t {
  kExact,              // the array is the slice
  kSqueezedLeading,    // the array has an extra leading dim, indexed with an integer
  kSqueezedMinor,      // the array has an extra minor dim, indexed with an integer
  kMinorSlice,         // the array is twice as wide in its minor dim; a static slice takes one half
  kPerCta,             // the leading dim holds one slice per index of an axis (dynamic start)
  kPartlyOutOfBounds,  // a dynamic start that runs past the end for axis index >= 1
  kWhollyOutOfBounds,  // a dynamic start that lies past the end for axis index >= 1
  kSqueezedSecond,     // the array has an extra dim after its first, indexed with an integer
  kPerCtaAt,           // an extra leading dim, one per index of an axis: .at[lax.axis_index(a)]
  kPerCtaSum,          // one slice per pair of two axes' indices: pl.ds(a * rows * |b| + b * rows)
  kUnproven,           // pl.ds(lax.axis_index(a), rows): a start the compiler proves no multiple of
  kUnprovenSqueezed,   // the same after an integer index: x.at[1, pl.ds(lax.axis_index(a), rows)]
};

// A deliberate mistake in the source shape (copy.src_shape).
enum class SrcShapeFault : std::uint8_t {
  kNone,
  kUnscaled,  // a PARTITIONED copy whose source is not multiplied by the collective size
  kOffByOne,  // the minor dim of the source is one larger
};

// The destination seen through `ref.transpose(permutation)` (docs/case-format.md "Transposed SMEM
// refs"): the allocation holds the copy's slice in the permuted order.
enum class TransposeChoice : std::uint8_t {
  kNone,
  kLeading,    // the first two dims swapped (rank 3 or more): the last dim stays
  kRotate,     // the first three dims rotated, (1, 2, 0, ...): at rank 2 and 3 the last dim moves
  kMovesLast,  // the last two dims swapped: the compiler refuses it, interpret mode runs it
};

enum class BarrierChoice : std::uint8_t {
  kIndexed,    // bar.at[0]
  kUnindexed,  // bar (valid only for a single barrier)
  kNone,       // no barrier argument
};

enum class PartitionAxis : std::uint8_t { kFirst, kSecond, kLast, kOutOfRange };

// What a copy looks like before Hopper (cp.async: no barrier, no collective, PROMISE_IN_BOUNDS),
// used instead of the TMA choices when the target is sm_80.
struct CpAsyncChoice {
  bool plain = true;  // drop the collective axes and leader tracking
  BarrierChoice barrier = BarrierChoice::kNone;
  std::optional<OobMode> oob_mode = OobMode::kPromiseInBounds;
  bool keep_predicate = false;
};

// SMEM transforms of the destination allocation (plgpu.TilingTransform((8, S * 8 // bits)),
// plgpu.SwizzleTransform(S)), with the mistakes JAX refuses; the destination then has the shape
// the transforms need: rows a multiple of 8, a minor dim of S bytes.
enum class SmemTransformKind : std::uint8_t {
  kNone,
  kTiledSwizzled,
  kTiled,
  kSwizzled,
  kBadSwizzle,            // SwizzleTransform(16) (alloc.smem.swizzle_value)
  kTilingNotDividing,     // 4 rows more than whole tiles (alloc.smem.tiling_divides)
  kSwizzleMinorMismatch,  // a tile half the swizzle's width (alloc.smem.swizzle_minor_dim)
  kTiledMinor,            // a tiling of the minor dim only, (S * 8 // bits,), and the swizzle
                          // (Lane's vector loads and stores refuse it: lower.vector.tiling_rank)
};

// A slice of the destination ref, `dst.at[pl.ds(start, rows)]` of an allocation with more rows.
enum class SmemSliceKind : std::uint8_t {
  kNone,
  kStatic,      // the second half of twice the rows
  kMisaligned,  // 4 rows in (lower.smem.slice_tile_aligned when tiled)
  kPerCta,      // pl.ds(axis_index(a) * rows, rows): one slice per index of an axis
};

struct SmemChoice {
  SmemTransformKind transform = SmemTransformKind::kNone;
  std::int64_t swizzle = 128;  // 32, 64 or 128
  std::int64_t row_tiles = 1;  // rows = 8 * row_tiles
  // Rows in 64s instead (the WGMMA layout's tile, which a vector load of a tiled and swizzled ref
  // needs: lower.vector.wgmma_tiling).
  bool wgmma_rows = false;
  bool gmem_misfit = false;  // the source array has 4 rows past the slice (gmem_tiling)
  SmemSliceKind slice = SmemSliceKind::kNone;
};

struct CopyPlan {
  CopyMode mode = CopyMode::kPlain;
  AxisChoice axes;
  DType dtype = DType::kFloat32;
  std::optional<DType> src_dtype;  // set: a source of another dtype (copy.dtype_mismatch)
  ShapeChoice shape;               // of the destination ref
  bool large = false;              // up to 256 KiB over the cluster instead of 16 KiB
  bool dst_indexed = false;        // the allocation has a leading dim of 2; dst is .at[1]
  // A dynamic GMEM slice start wrapped in pl.multiple_of(start, rows): true of a per-CTA start,
  // an overstatement of an unproven or partly out-of-bounds one (Warpgroup's layout inference
  // believes it either way).
  bool assume_multiple = false;
  PartitionAxis partition_axis = PartitionAxis::kFirst;
  SrcShapeFault src_fault = SrcShapeFault::kNone;
  SrcLayout layout = SrcLayout::kExact;
  std::optional<OobMode> oob_mode;
  std::optional<CondChoice> predicate;
  std::optional<CondChoice> guard;  // set: the copy sits in a `when`
  BarrierChoice barrier = BarrierChoice::kIndexed;
  Fill fill;
  CpAsyncChoice cp_async;
  SmemChoice smem;
  TransposeChoice transpose = TransposeChoice::kNone;
  bool transpose_ref = false;   // the deprecated plgpu.transpose_ref(ref, permutation) spelling
  bool transpose_back = false;  // the write-back reads the buffer through the same transpose
};

}  // namespace collfuzz::generators
