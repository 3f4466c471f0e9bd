// Where the bytes of an SMEM allocation lie: the layout its transforms give it
// (`plgpu.SMEM(shape, dtype, transforms=(plgpu.TilingTransform(t), plgpu.SwizzleTransform(S)))`,
// docs/case-format.md "SMEM transforms"). A buffer's recorded bytes (an outcome's `buffers`)
// are its physical bytes, as SMEM holds them.
//
// Tiling t of the trailing k dims turns the logical shape (..., d_0, ..., d_k-1) into the tiled
// shape (..., d_0/t_0, ..., d_k-1/t_k-1, t_0, ..., t_k-1), laid out row-major; element
// (..., i_0, ..., i_k-1) sits at (..., i_0/t_0, ..., i_0%t_0, ...). Swizzle S (32, 64, 128 bytes)
// then moves byte offset o to o ^ (((o >> 7) % (S / 16)) << 4): the 16-byte chunks of each
// 128-byte row XORed with the row's index within its S/16-row group (Mosaic GPU's
// fragmented_array.py, `swizzle_group = (offset // 128) % (swizzle // 16)`; CUTLASS's
// Swizzle<log2(S/16), 4, 3>). Offsets are the buffer's own: Pallas aligns every SMEM buffer to
// 1024 bytes, a whole number of swizzle patterns.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

struct SmemLayout {
  Shape shape;               // logical
  Shape tiling;              // empty: row-major
  std::int64_t swizzle = 0;  // bytes; 0: none
  std::int64_t element_bytes = 1;
  // Whether the physical layout is the logical row-major one.
  bool identity() const { return tiling.empty() && swizzle == 0; }
};

// The shape a tiling gives the allocation's ref: its untiled leading dims, then the count of tiles
// along each tiled dim, then the tile (`(2, 64, 32)` tiled (8, 32): `(2, 8, 1, 8, 32)`); the
// shape itself without a tiling. Mosaic GPU's memref of a tiled ref has it (TileTransform).
Shape tiled_shape(const Shape& shape, const Shape& tiling);

// The layout of an smem allocation (whole bytes per element: the parser refuses transforms on
// sub-byte dtypes).
SmemLayout smem_layout(const Alloc& a);

// Byte offset `o` after a swizzle of `swizzle` bytes (0: unchanged).
inline std::int64_t swizzled_offset(std::int64_t o, std::int64_t swizzle) {
  if (swizzle <= 16) return o;
  return o ^ (((o >> 7) % (swizzle / 16)) << 4);
}

// The physical byte offset of the first byte of logical element `e` (row-major index).
std::int64_t physical_offset(const SmemLayout& l, std::int64_t e);

// physical_offset of every element 0..n-1 of the shape (row-major), into `out` (resized). The
// offset separates into a term per dim (a leading dim's stride, or a tiled dim's tile count and
// place within the tile), so each row costs one table lookup per element, not a division per dim.
void physical_offsets(const SmemLayout& l, std::vector<std::int64_t>& out);

// A logical (row-major) image of the buffer, laid out physically; and back.
std::vector<std::uint8_t> to_physical(const SmemLayout& l, const std::vector<std::uint8_t>& bytes);
std::vector<std::uint8_t> to_logical(const SmemLayout& l, const std::vector<std::uint8_t>& bytes);

}  // namespace collfuzz
