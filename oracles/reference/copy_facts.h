// The static facts of one copy_gmem_to_smem op that several rule families and the accounting
// need: shapes after indexing, bytes, and (once resolved) the collective CUDA dims.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "harness/core/case.h"
#include "oracles/reference/program_walk.h"

namespace collfuzz::ref {

class MeshFacts;

struct CopyFacts {
  const Op* op = nullptr;
  const CopyGmemToSmem* copy = nullptr;  // null for a store
  bool is_store = false;                 // copy_smem_to_gmem: `src` is the GMEM output
  LeaderTracked leader_tracked = LeaderTracked::kNone;
  std::int64_t partition_axis = 0;
  std::optional<OobMode> oob_mode;
  const ArraySpec* src = nullptr;
  const Alloc* dst = nullptr;
  const Alloc* barrier = nullptr;  // the barrier allocation, if any
  Shape src_shape;                 // shape of src.at[...] (integer-indexed dims dropped)
  std::vector<bool> squeezed;      // per dim of the src array
  Shape dst_shape;                 // shape of dst.at[...]
  // The SMEM ref transposed (SmemTranspose; docs/case-format.md "Transposed SMEM refs"): the ref
  // the copy sees is dst_shape in the transpose's order, `view_shape`, which the GMEM slice
  // (src_shape) matches. The TMA moves the slice in the SMEM ref's own order: dim j of dst_shape
  // takes the slice's kept dim smem_order[j] (0, 1, ... without a transpose).
  const SmemTranspose* transpose = nullptr;
  Shape view_shape;
  std::vector<std::size_t> smem_order;
  std::int64_t bits_per_element = 0;
  std::int64_t dst_bits = 0;                // prod(dst_shape) * bits
  std::int64_t bytes = 0;                   // dst_bits / 8, as the lowering computes it
  std::vector<int> dims;                    // resolved collective CUDA dims, in the order written
  std::int64_t n = 1;                       // prod(cuda_cluster[d] for d in dims)
  bool leader = false;                      // collective non-empty and leader_tracked set
  std::optional<ReductionOp> reduction_op;  // a store's reduction_op=
};

// The shape of an SMEM ref `a.at[indices..., pl.ds(start, size)]` (`num_indices` integer
// indices, then the slice, if any, of the next dim).
Shape smem_ref_shape(const Alloc& a, std::size_t num_indices,
                     const std::optional<IndexEntry>& slice);

// One dim of a shape after a TileTransform of its trailing dims: shape dim `dim`, whole (tile 0),
// or its count of tiles (tile > 0, !in_tile), or the position within a tile (in_tile); `size`
// its extent. Tile counts come before the in-tile dims, as TileTransform orders them.
struct TiledDim {
  std::size_t dim = 0;
  std::int64_t tile = 0;
  bool in_tile = false;
  std::int64_t size = 0;
};
std::vector<TiledDim> tile_dims(const Shape& shape, const Shape& tiling);

// Everything but `dims`, `n` and `leader`, which need the collective axes resolved.
CopyFacts copy_facts(const Op& op, const CopyGmemToSmem& copy, const Case& c, const Scope& scope);
// A copy_smem_to_gmem as LaunchContext sees it: a TMA store of the whole SMEM source into the
// output's slice, with oob_mode UNDEFINED and no collective.
CopyFacts store_facts(const Op& op, const CopySmemToGmem& copy, const Case& c, const Scope& scope);
// Resolves the collective axes (all of them must be cluster axes) and fills dims, n and leader.
void resolve_collective(CopyFacts& f, const MeshFacts& mesh);

// The GMEM side of a TMA copy as LaunchContext sees it (spec 3.3 step 7): the slice after the
// PARTITIONED split, with squeezed dims moved to the front, dims of size 1 in both GMEM and the
// slice dropped, and squeezed dims collapsed when more than 5 dims remain. Needs a valid
// partition axis.
struct TmaShape {
  std::vector<std::int64_t> slice;
  std::vector<std::int64_t> strides;  // GMEM strides (elements) of those dims
  // The GMEM array's dims as the tensor map sees them (squeezed first, tiled; before dropping).
  std::vector<std::int64_t> tiled_gmem;
};
TmaShape tma_shape(const CopyFacts& f);
// The GMEM array's kept (not squeezed) dims in the order of the SMEM ref's dims (smem_order).
std::vector<std::size_t> kept_dims_in_smem_order(const CopyFacts& f);
// Whether the copy takes the bulk (non-tensor) path: a contiguous slice, no multicast, no leader
// tracking, no reduction, and an oob_mode other than ZEROS (the default).
bool bulk_path(const CopyFacts& f, const TmaShape& t);

// The region of a multicast destination that issuer `i` of `n` loads (spec 3.5, chunk split over
// the destination's dims from the front; size-1 dims are skipped). Per dst dim: [start, size).
// nullopt when no split exists (JAX rejects the copy).
std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> multicast_chunk(
    const Shape& dst_shape, std::int64_t n, std::int64_t i);

// multicast_chunk for the copy's SMEM ref as JAX splits it: over its tiled shape (a tiled ref),
// never along the minor dim (a swizzled one); the chunk in the ref's own dims.
std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> multicast_region(
    const CopyFacts& f, std::int64_t n, std::int64_t i);

// cluster_idx over the collective dims: row-major over the collective Pallas axes (JAX sorts the
// CUDA dims x, y, z, minor first; a dim written twice counts twice).
std::int64_t group_index(const MeshFacts& mesh, const std::vector<int>& dims, std::int64_t rank);
// Whether CTAs a and b agree on every cluster dim not in `dims` (are in the same group).
bool same_group(const MeshFacts& mesh, const std::vector<int>& dims, std::int64_t a,
                std::int64_t b);
// The CTAs a multicast from `rank` over `dims` reaches: the bits of the 16-bit mask
// utils.cluster_collective_mask computes (spec 3.2). Without a repeated dim this is exactly the
// CTA's group (same_group); a repeated dim spreads the mask past it, as JAX's arithmetic does. A
// bit past the cluster's last CTA names no CTA (undefined on the hardware) and is listed as is.
std::vector<std::int64_t> multicast_targets(const MeshFacts& mesh, const std::vector<int>& dims,
                                            std::int64_t rank);

}  // namespace collfuzz::ref
