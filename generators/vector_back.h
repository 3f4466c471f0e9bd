// Vector stores in generated programs (docs/case-format.md, "vector_store"): a scope's write-back
// done as a vector store of its SMEM tile (`out[...] = tile[...] + 1`), or a vector store after
// its TMA store into the same output (ordered by the store's wait, racing with a store in flight).
#pragma once

#include <cstdint>
#include <optional>

#include "generators/axis_environment.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

enum class VectorBackKind : std::uint8_t {
  kReplace,  // the TMA store becomes a vector store (the commits and waits stay)
  kAfter,    // a vector store after the TMA store, into the same slice
  kInPlace,  // `tile[...] = value` into the SMEM tile before its TMA store (the pattern of real
             // kernels: compute, store to SMEM, commit_smem, TMA store)
};

// With kInPlace: how the vector store is fenced before the TMA store reads the tile.
enum class SmemFence : std::uint8_t {
  kStoreOwn,  // copy_smem_to_gmem's own commit_smem (JAX's idiom)
  kExplicit,  // {"op": "commit_smem"}, the store without its own
  kNone,      // no fence: the TMA store races with the vector store
};

// The vector value: of the tile (its SMEM load) and small constants.
enum class VectorValueShape : std::uint8_t {
  kLoad,         // tile
  kAddConst,     // tile + c
  kSquare,       // tile * tile
  kChain,        // (tile - c) * tile + c
  kConst,        // c
  kMinConst,     // jnp.minimum(tile, c)
  kMaxOfDiff,    // jnp.maximum(tile - c, c)
  kRoundTrip,    // tile.astype(U).astype(dtype): through a narrower or wider dtype U (8-bit
                 // ones included; an 8-bit tile widened to 16 bits adds c there)
  kMixedWidth,   // w[...].astype(dtype) + tile: w an input of the tile's shape and another width
                 // (under Lane, where the two register layouts differ: incompatible_layouts)
  kBitwise,      // (tile ^ c) | (tile & c), or (constant 3) (c ^ tile) | (tile & c): integer
                 // tiles, 8-bit ones included (Mosaic GPU allows bitwise ops on them, but not
                 // under Lane with the splat on the left); a float tile gets tile + c
  kShift,        // lax.shift_right_arithmetic(tile << c, c) ^ lax.shift_right_logical(tile, c):
                 // integer tiles (8-bit ones meet lower.vector.pointwise_8bit); a float tile
                 // gets tile + c
  kShiftByTile,  // lax.shift_right_arithmetic(tile, tile & (width - 1)) ^ (tile << c): each
                 // element by its own amount, below the width; or (constant 3) tile << tile,
                 // past the width for most elements (unspecified for the compiler: LLVM's
                 // poison; XLA's rule for interpret mode); integer tiles, a float tile gets
                 // tile + c
  kIota,         // tile + iota or iota ^ tile (integers), the iota cast to the strided layout of
                 // the dtype, or (constant 3) of vec_size 1: under Lane another layout than the
                 // tile's where the tile's vector is longer (incompatible_layouts), and a count of
                 // no multiple of 128 (lower.vector.iota_layout)
  kIotaUncast,   // tile + iota or (constant 2) iota ^ tile, the iota with no layout cast: Lane
                 // refuses it (lower.vector.iota_uncast); Warpgroup lays it out as a load
                 // (dialect.vector.layout_inference for a count of no multiple of 128)
  kBroadcast,    // jnp.broadcast_to(tile.at[0][...], tile's shape) + c (^ c on integers), or
                 // (constant 2) tile + that (under Lane the row's vector is shorter than the
                 // tile's: incompatible_layouts); tile + c where the tile has no rows of a
                 // multiple of 128 elements
  kBroadcastInner,  // tile + lax.broadcast_in_dim(x, tile's shape, (0, ..., rank - 2)) (^ on
                    // integers), x of the tile's shape less its last dim: tile.at[0][...] where
                    // every dim is one size (a row onto the leading dims), else an iota along its
                    // first dim where it holds a multiple of 128 elements, else (and for constant
                    // 3) c. Along other dims than new leading ones: Lane refuses each
                    // (lower.vector.broadcast_layout, or its load's strided_elements first),
                    // Warpgroup the load and the iota (dialect.vector.broadcast_layout) and lowers
                    // c; interpret mode computes them. tile + c where the tile has rank 1
  kBroadcastOne,    // tile + jnp.broadcast_to(x, tile's shape) (^ on integers), x of the tile's
                    // shape with one dim of 1: the first (constant 1; a row of 1 broadcast before
                    // the kept dims: lowers everywhere), or the first after a kept dim that
                    // leaves a multiple of 128 elements (Lane refuses the strided x,
                    // lower.vector.strided_broadcast, and Warpgroup's layout inference,
                    // dialect.vector.broadcast_layout); x an iota along the tile's last dim.
                    // tile + c where there is no such dim or x holds no multiple of 128 elements
  kCarried,         // acc = lax.fori_loop(0, c + 1, lambda i, acc: acc + tile, init) (acc ^ tile on
             // 8 bits), init the tile or (constant 2) c, then the store of acc: under Lane a splat
             // init meets lower.loop.carry_layout; tile + c inside a loop (loops do not nest) or
             // for a tile of no multiple of 128 elements
};

struct VectorBackPlan {
  VectorBackKind kind = VectorBackKind::kReplace;
  VectorValueShape value = VectorValueShape::kAddConst;
  std::int64_t constant = 1;  // 1..3: exact in every dtype a vector store holds
  SmemFence fence = SmemFence::kStoreOwn;
  // Also for a tile of no multiple of 128 elements (two or more): JAX's strided-count rules
  // (lower.vector.strided_elements, dialect.vector.layout_inference, splat_store_count).
  bool uneven = false;
  // kCarried: the loop is a plgpu.nd_loop over a varying axis of the mesh, its grid the trips
  // times the axis size (every thread runs the same trips; the count is dynamic all the same).
  bool carry_nd = false;
  // The tile read from a peer CTA, where the scope syncs its cluster first (a ClusterBarrier):
  // 1 `plgpu.cluster_ref(tile, {a: size - 1 - lax.axis_index(a)})` (the mirror), 2 `{a:
  // lax.rem(lax.axis_index(a) + 1, size)}` (the next); a the first cluster axis of size > 1.
  // With 2 and kInPlace, the store writes the next CTA's tile instead (a DSMEM write).
  std::int64_t peer = 0;
};

// Applies `plan` to the write-back ops `ops` (the store `store` and its commits and waits) of an
// output of `dtype` whose stored tile has the shape `tile`. Leaves them alone where a vector
// store cannot hold the tile (a dtype or an element count docs/case-format.md does not model) or
// the store has a predicate or a reducing twin.
// `in_loop`: the ops are in a loop's body (kCarried adds a loop, and loops do not nest).
// `nd_axis`: the axis a carry_nd loop deals its steps out over (none: a fori_loop).
// `peer_axis`: the cluster axis a plan's peer read crosses (none: the CTA's own tile).
// `transforms`: the tile's allocation's (docs/case-format.md, "Vector values of transformed
// refs"): its loads and a store into it meet the WGMMA layout, beside which the case language
// holds no iota, broadcast or carry (those values become tile + c).
void apply_vector_back(Body& ops, const VectorBackPlan& plan, const CopySmemToGmem& store,
                       DType dtype, const Shape& tile, const ArraySpec* partner = nullptr,
                       bool in_loop = false, const NamedAxis* nd_axis = nullptr,
                       const NamedAxis* peer_axis = nullptr, const SmemTransforms& transforms = {});

// kMixedWidth: the dtype of the partner input for a tile of `dtype` (another width), or nullopt
// where there is none (8-bit dtypes).
std::optional<DType> partner_dtype(DType dtype);

}  // namespace collfuzz::generators
