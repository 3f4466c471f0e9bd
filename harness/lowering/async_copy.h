// LaunchContext.async_copy (jax/experimental/mosaic/gpu/launch_context.py) as far as a Pallas
// GMEM <-> SMEM copy reaches it: _prepare_async_copy (slice parsing, the PARTITIONED split, moving
// squeezed dims to the front), _prepare_tma (the 16-byte stride rule, dropping unit dims,
// collapsing squeezed dims, the multicast chunk split, the 16-byte minor dim), the choice between
// the bulk and the tensor-map instruction and its 256-element box, and the cp.async path. Raises
// their diagnostics at the stage the caller names (lower under Lane, dialect under Warpgroup);
// returns the static shape of the transfer, which `instantiate` turns into one CTA's transfer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/case.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/plan.h"

namespace collfuzz::lowering {

struct AsyncCopyRequest {
  const ArraySpec* gmem = nullptr;
  const std::vector<IndexEntry>* index = nullptr;  // the GMEM slice; nullptr: the whole array
  Shape smem_shape;                                // the SMEM ref (after its integer indexing)
  SmemTransforms smem_transforms;                  // of the SMEM ref's allocation
  // The SMEM ref transposed (SmemTranspose::permutation; empty: not): the GMEM slice's kept dims
  // reach it in that order (the TransposeTransform _extract_smem_copy_params undoes on the GMEM
  // side, batched over the squeezed dims).
  std::vector<std::int64_t> transpose;
  bool gmem_to_smem = true;
  bool cp_async = false;        // AsyncCopyImplementation.CP_ASYNC (pre-Hopper)
  std::vector<int> collective;  // resolved CUDA dims
  LeaderTracked leader_tracked = LeaderTracked::kNone;
  std::int64_t partition_axis = 0;
  OobMode oob_mode = OobMode::kZeros;
  std::optional<ReductionOp> reduction_op;  // a store's reduction_op=
  Stage stage = Stage::kLower;
  std::string op;  // JSON path, for diagnostics
  JaxFacts jax;    // the case's JAX release (harness/lowering/jax_facts.h)
};

// One dimension of the GMEM view the transfer uses (after the transforms): its coordinate is a
// linear combination of the slice's base indices along the array's own dims.
struct GmemViewDim {
  struct Term {
    int dim = 0;            // array dim
    std::int64_t mult = 1;  // multiplier
    // A tiled dim (TileTransform): the base index's tile (base / tile) or its place within the
    // tile (base % tile, in_tile); 0: the base index itself.
    std::int64_t tile = 0;
    bool in_tile = false;
  };
  Term terms[kMaxArrayRank] = {};
  int num_terms = 0;
  std::int64_t extent = 1;  // size of the view along this dim
  std::int64_t stride = 1;  // GMEM stride, in elements
  std::int64_t box = 1;     // transfer size along this dim (one CTA's chunk)
};

// The multicast chunk split of one dim: CTA with group index i moves chunk ((i / divisor) %
// modulus) of `chunk` elements along view dim `dim` (modulus 0: no modulus).
struct ChunkSplit {
  int dim = 0;
  std::int64_t divisor = 1;
  std::int64_t modulus = 0;
  std::int64_t chunk = 1;
  std::int64_t smem_stride = 1;  // elements between consecutive indices along `dim` in SMEM
};

struct AsyncCopyShape {
  LoadPath path = LoadPath::kTensor;
  int elem_bits = 32;
  std::vector<GmemViewDim> view;  // outermost first; kCpAsync: the array's own dims
  int partition_dim = -1;         // PARTITIONED over more than one CTA: the array dim split
  std::int64_t partition_size = 0;
  std::vector<int> collective;
  std::int64_t collective_size = 1;
  std::vector<ChunkSplit> splits;   // multicast chunk split
  std::int64_t transfer_bytes = 0;  // bytes one issue moves into one CTA
  bool clamp_to_array = false;      // the bulk path with OobMode::kUndefined
  std::int64_t array_elements = 0;
  std::vector<std::int64_t> logical_size;  // per array dim: the slice size (0: squeezed)
  std::int64_t swizzle = 0;                // bytes; 0: none (SMEM written/read swizzled)
  // The tensor-map descriptor error the host raises once the kernel is lowered (finalize_size).
  std::optional<std::string> descriptor_error;
};

// Runs the checks in JAX's order; throws LoweringError.
AsyncCopyShape prepare_async_copy(const AsyncCopyRequest& req, const ClusterGeometry& geometry);

// The base index of the slice along each array dim, for one CTA and thread.
std::vector<std::int64_t> slice_base(
    const ArraySpec& gmem, const std::vector<IndexEntry>* index,
    const std::function<std::int64_t(const std::string&)>& axis_index, std::int64_t loop_iteration);

// One CTA's transfer: fills the GMEM side, the SMEM offset of the region (relative to the SMEM
// ref) and the element count of `load`. `group_index` is cluster_idx(collective).
void instantiate_transfer(const AsyncCopyShape& shape, const ArraySpec& gmem,
                          std::vector<std::int64_t> base, std::int64_t group_index, LoadOp& load,
                          std::int64_t& smem_element_offset);

}  // namespace collfuzz::lowering
