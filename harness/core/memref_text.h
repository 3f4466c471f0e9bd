// The MLIR type Mosaic GPU prints for a ref a vector load or store reads through (JAX 0.11.2 and
// 0.12.0.1 alike), as its strided-layout check names it: "memref<64xi32> must have a number of
// elements that is a multiple of 128 (got 64)" (FragmentedArray.load_strided, rule
// lower.vector.strided_elements). Shared by the reference's rule and the lowering, as the layout
// arithmetic is (harness/core/vector_layout.h); checked against both releases' lowering by the
// corpus (lower.vector.strided_elements__*).
//
// memref<{kept dims}x{element type}[, strided<[{strides}][, offset: {offset}]>][,
//        #gpu.address_space<workgroup>]>
// - the kept dims: each sliced dim's size and every dim past the index; an integer index drops
//   its dim;
// - a strided layout once the ref is indexed at all (`x.at[pl.ds(0, 64)]` of an x of 64 elements
//   too): the ref's row-major strides of the kept dims; the offset is `?` when an index is an
//   integer (static ones included: Pallas indexes with a dynamic value) or a slice starts
//   dynamically, else the sum of the static starts times their strides, left out when 0;
// - the address space for an SMEM ref.
#pragma once

#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

// `cluster`: an SMEM ref through plgpu.cluster_ref, in the shared::cluster address space
// (`memref<64xf32, 7 : i32>`, mgpu.get_cluster_ref; probed on both releases).
std::string memref_text(DType dtype, const Shape& ref_shape, const std::vector<IndexEntry>& index,
                        bool smem, bool cluster = false);

// An SMEM ref's leading integer indices (`buf.at[1]`, a loop slot `buf.at[i % 2]` for entry 0 when
// `slotted`) as index entries.
std::vector<IndexEntry> smem_index_entries(const std::vector<std::int64_t>& smem_index,
                                           bool slotted);

}  // namespace collfuzz
