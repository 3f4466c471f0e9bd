#include "harness/sim/tma_transfer.h"

#include <algorithm>
#include <cstring>

#include "harness/core/fill.h"
#include "harness/core/reduction.h"
#include "harness/core/smem_layout.h"
#include "harness/lowering/mutants.h"

namespace collfuzz::sim {
namespace {

// Whether element j of a slice region (row-major over its non-squeezed dims) lies outside the
// array.
bool outside(const lowering::ArraySlice& s, std::int64_t j) {
  for (int k = s.rank - 1; k >= 0; --k) {
    std::int64_t c = s.start[k];
    if (s.size[k] != 0) {
      c += j % s.size[k];
      j /= s.size[k];
    }
    if (c < 0 || c >= s.dims[k]) return true;
  }
  return false;
}

bool slice_inside(const lowering::ArraySlice& s) {
  for (int k = 0; k < s.rank; ++k) {
    const std::int64_t size = s.size[k] == 0 ? 1 : s.size[k];
    if (s.start[k] < 0 || s.start[k] + size > s.dims[k]) return false;
  }
  return true;
}

// The box element by element, in row-major box order, each at its swizzled SMEM address.
void write_tensor_swizzled(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load) {
  const lowering::TensorBox& t = load.tensor;
  const int bits = load.elem_bits;  // whole bytes: the parser refuses sub-byte transforms
  const std::int64_t w = bits / 8;
  const std::int64_t swizzle =
      lowering::mutant_active(lowering::Mutant::kSwizzleLoadIgnored) ? 0 : load.swizzle;
  std::int64_t c[lowering::kMaxTmaRank] = {};
  for (std::int64_t k = 0; k < load.elements; ++k) {
    bool in_bounds = true;
    std::int64_t g = 0;
    for (int d = 0; d < t.rank; ++d) {
      const std::int64_t x = t.coords[d] + c[d];
      in_bounds = in_bounds && x >= 0 && x < t.dims[d];
      g += x * t.strides[d];
    }
    const std::int64_t at = swizzled_offset(load.smem_offset + k * w, swizzle);
    const std::uint64_t v = in_bounds ? src.element(g) : 0;
    store_packed(smem.data(), bits, at / w, v);
    for (int d = t.rank - 1; d >= 0; --d) {
      if (++c[d] < t.box[d]) break;
      c[d] = 0;
    }
  }
  smem.mark(load.smem_offset, load.elements * w, false);
}

}  // namespace

// Writes the transfer into `smem` at the load's offset: the box row by row (the innermost
// dim), out-of-bounds elements as zeros. Trailing dims the box covers whole and that are
// contiguous in GMEM are merged first, so that a row is as long as it can be.
void write_tensor(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load) {
  if (load.swizzle != 0) {
    write_tensor_swizzled(smem, src, load);
    return;
  }
  lowering::TensorBox t = load.tensor;
  while (t.rank >= 2) {
    const int in = t.rank - 1;
    const int out = t.rank - 2;
    const bool whole = t.coords[in] == 0 && t.box[in] == t.dims[in];
    if (!whole || t.strides[out] != t.strides[in] * t.dims[in]) break;
    t.coords[out] *= t.dims[in];
    t.box[out] *= t.box[in];
    t.dims[out] *= t.dims[in];
    t.strides[out] = t.strides[in];
    --t.rank;
  }
  const int bits = load.elem_bits;
  std::uint8_t* dst = smem.data() + load.smem_offset;
  const bool zero_fill = !lowering::mutant_active(lowering::Mutant::kOobFillNotZero);
  const int r = t.rank;
  const std::int64_t inner = t.box[r - 1];
  const std::int64_t inner_stride = t.strides[r - 1];
  const std::int64_t rows = load.elements / inner;
  const std::int64_t c0 = t.coords[r - 1];
  const bool fast = bits >= 8 && inner_stride == 1 && src.bytes() != nullptr;
  const int n = bits / 8;
  std::int64_t outer[lowering::kMaxTmaRank] = {};
  for (std::int64_t row = 0; row < rows; ++row) {
    bool row_in_bounds = true;
    std::int64_t base = 0;
    for (int k = 0; k < r - 1; ++k) {
      const std::int64_t c = t.coords[k] + outer[k];
      row_in_bounds = row_in_bounds && c >= 0 && c < t.dims[k];
      base += c * t.strides[k];
    }
    const std::int64_t lo = row_in_bounds ? std::clamp<std::int64_t>(-c0, 0, inner) : inner;
    const std::int64_t hi =
        row_in_bounds ? std::clamp<std::int64_t>(t.dims[r - 1] - c0, lo, inner) : inner;
    const std::int64_t first = row * inner;
    if (fast && lo < hi) {
      std::memcpy(dst + (first + lo) * n, src.bytes() + (base + c0 + lo) * n,
                  static_cast<std::size_t>((hi - lo) * n));
    } else {
      for (std::int64_t i = lo; i < hi; ++i) {
        store_packed(dst, bits, first + i, src.element(base + (c0 + i) * inner_stride));
      }
    }
    if (zero_fill) {
      for (std::int64_t i = 0; i < lo; ++i) store_packed(dst, bits, first + i, 0);
      for (std::int64_t i = hi; i < inner; ++i) store_packed(dst, bits, first + i, 0);
    }
    for (int k = r - 2; k >= 0; --k) {  // next row
      if (++outer[k] < t.box[k]) break;
      outer[k] = 0;
    }
  }
  smem.mark(load.smem_offset, packed_span(bits, 0, load.elements), false);
}

// The bulk and cp.async paths: a linear run of GMEM; what lies outside the array, or outside the
// slice's bounds, is undefined.
void write_linear(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load) {
  const int bits = load.elem_bits;
  std::uint8_t* dst = smem.data() + load.smem_offset;
  const std::int64_t total = src.elements();
  const std::int64_t moved = load.linear_elements;
  const std::int64_t g0 = load.linear_offset;
  if (moved > 0 && g0 >= 0 && g0 + moved <= total && bits >= 8 && src.bytes()) {
    const int n = bits / 8;
    std::memcpy(dst, src.bytes() + g0 * n, static_cast<std::size_t>(moved * n));
    smem.mark(load.smem_offset, moved * n, false);
  } else {
    for (std::int64_t j = 0; j < moved; ++j) {
      const std::int64_t g = g0 + j;
      const bool inside = g >= 0 && g < total;
      store_packed(dst, bits, j, inside ? src.element(g) : 0);
      smem.mark(load.smem_offset + packed_byte(bits, j), 1, !inside);
    }
  }
  if (!slice_inside(load.logical)) {
    for (std::int64_t j = 0; j < load.elements; ++j) {
      if (outside(load.logical, j)) smem.mark(load.smem_offset + packed_byte(bits, j), 1, true);
    }
  }
}

namespace {

// The SMEM source's shape: the slice's sliced dims, in the ref's order when it is transposed.
Shape store_ref_shape(const lowering::StoreOp& s) {
  Shape kept;
  for (int k = 0; k < s.slice.rank; ++k)
    if (s.slice.size[k] != 0) kept.push_back(s.slice.size[k]);
  if (s.transpose_rank == 0 || static_cast<std::size_t>(s.transpose_rank) != kept.size())
    return kept;
  Shape ref(kept.size());
  for (std::size_t v = 0; v < kept.size(); ++v)
    ref[static_cast<std::size_t>(s.transpose[v])] = kept[v];
  return ref;
}

// Element by element: the output element output_index(j) of SMEM element j, combined with it by
// the store's reduction op if any.
template <typename OutputIndex>
void write_store_elements(const SharedMemory& smem, const std::uint8_t* src,
                          const lowering::StoreOp& s, DType dtype, OutputArray& out,
                          const OutputIndex& output_index) {
  const int bits = s.elem_bits;
  for (std::int64_t j = 0; j < s.elements; ++j) {
    const std::int64_t index = output_index(j);
    const auto e = static_cast<std::size_t>(index);
    const bool undefined = smem.undefined(s.smem_offset + packed_byte(bits, j));
    if (s.reduction_op) {
      const bool was = out.written[e] != 0;
      store_packed(
          out.bytes.data(), bits, index,
          apply_reduction(*s.reduction_op, dtype, load_packed(out.bytes.data(), bits, index),
                          load_packed(src, bits, j)));
      out.written[e] = (undefined || !was) ? 0 : 1;
    } else {
      store_packed(out.bytes.data(), bits, index, load_packed(src, bits, j));
      out.written[e] = undefined ? 0 : 1;
    }
  }
}

// A store from a tiled and/or swizzled SMEM ref: SMEM element j (row-major over the ref's shape,
// the slice's sliced dims) lies at its place in the tiled shape, its address swizzled.
template <typename OutputIndex>
void write_store_transformed(const SharedMemory& smem, const std::uint8_t* src,
                             const lowering::StoreOp& s, DType dtype, OutputArray& out,
                             const OutputIndex& output_index) {
  const int bits = s.elem_bits;
  const std::int64_t w = bits / 8;
  const Shape ref = store_ref_shape(s);
  SmemLayout layout;
  layout.shape = ref;
  layout.tiling.assign(s.tiling, s.tiling + s.tiling_rank);
  layout.swizzle = 0;  // applied below, on the SMEM address
  layout.element_bytes = w;
  const std::int64_t swizzle = s.swizzle;
  thread_local std::vector<std::int64_t> offsets;  // reused: the campaign's hot path
  physical_offsets(layout, offsets);
  for (std::int64_t j = 0; j < s.elements; ++j) {
    const std::int64_t at =
        swizzled_offset(s.smem_offset + offsets[static_cast<std::size_t>(j)], swizzle);
    const std::int64_t local = at - s.smem_offset;
    const std::int64_t index = output_index(j);
    const auto e = static_cast<std::size_t>(index);
    const bool undefined = smem.undefined(at);
    const std::uint64_t v = load_packed(src, bits, local / w);
    if (s.reduction_op) {
      const bool was = out.written[e] != 0;
      store_packed(
          out.bytes.data(), bits, index,
          apply_reduction(*s.reduction_op, dtype, load_packed(out.bytes.data(), bits, index), v));
      out.written[e] = (undefined || !was) ? 0 : 1;
    } else {
      store_packed(out.bytes.data(), bits, index, v);
      out.written[e] = undefined ? 0 : 1;
    }
  }
}

}  // namespace

void write_store(const SharedMemory& smem, const std::uint8_t* src, const lowering::StoreOp& s,
                 DType dtype, OutputArray& out) {
  const int bits = s.elem_bits;
  std::int64_t strides[lowering::kMaxArrayRank];
  std::int64_t stride = 1;
  for (int k = s.slice.rank - 1; k >= 0; --k) {
    strides[k] = stride;
    stride *= s.slice.dims[k];
  }
  // The output element that SMEM element j (row-major over the sliced dims) lands on.
  const auto output_index = [&](std::int64_t j) {
    std::int64_t index = 0;
    for (int k = s.slice.rank - 1; k >= 0; --k) {
      std::int64_t c = s.slice.start[k];
      if (s.slice.size[k] != 0) {
        c += j % s.slice.size[k];
        j /= s.slice.size[k];
      }
      index += c * strides[k];
    }
    return index;
  };
  if (s.transpose_rank > 0) {
    // SMEM element j, row-major over the ref's dims: the ref's dim transpose[v] is the slice's
    // kept dim v.
    int kept[lowering::kMaxArrayRank];
    int nk = 0;
    for (int k = 0; k < s.slice.rank; ++k)
      if (s.slice.size[k] != 0) kept[nk++] = k;
    const Shape ref = store_ref_shape(s);
    std::int64_t origin = 0;
    for (int k = 0; k < s.slice.rank; ++k) origin += s.slice.start[k] * strides[k];
    const auto transposed_index = [&](std::int64_t j) {
      std::int64_t coord[lowering::kMaxArrayRank] = {};
      for (std::size_t d = ref.size(); d-- > 0;) {
        coord[d] = j % ref[d];
        j /= ref[d];
      }
      std::int64_t index = origin;
      for (int v = 0; v < nk && v < s.transpose_rank; ++v)
        index += coord[s.transpose[v]] * strides[kept[v]];
      return index;
    };
    if (s.tiling_rank > 0 || s.swizzle != 0) {
      write_store_transformed(smem, src, s, dtype, out, transposed_index);
    } else {
      write_store_elements(smem, src, s, dtype, out, transposed_index);
    }
    return;
  }
  if (s.tiling_rank > 0 || s.swizzle != 0) {
    write_store_transformed(smem, src, s, dtype, out, output_index);
    return;
  }
  // The innermost sliced dim: SMEM runs along it; when it is the array's last dim, so does the
  // output, and a row of whole bytes moves at once.
  int inner = -1;
  for (int k = s.slice.rank - 1; k >= 0 && inner < 0; --k) {
    if (s.slice.size[k] != 0) inner = k;
  }
  if (s.reduction_op) {
    // cp.reduce.async.bulk.tensor: each output element combined with the SMEM one; defined
    // where both were.
    for (std::int64_t j = 0; j < s.elements; ++j) {
      const std::int64_t index = output_index(j);
      const auto e = static_cast<std::size_t>(index);
      const bool undefined =
          smem.undefined(s.smem_offset + packed_byte(bits, j)) || out.written[e] == 0;
      store_packed(
          out.bytes.data(), bits, index,
          apply_reduction(*s.reduction_op, dtype, load_packed(out.bytes.data(), bits, index),
                          load_packed(src, bits, j)));
      out.written[e] = undefined ? 0 : 1;
    }
    return;
  }
  if (bits >= 8 && inner >= 0 && inner == s.slice.rank - 1) {
    const std::int64_t row = s.slice.size[inner];
    const std::int64_t w = bits / 8;
    for (std::int64_t j = 0; j < s.elements; j += row) {
      const std::int64_t index = output_index(j);
      std::memcpy(out.bytes.data() + index * w, src + j * w, static_cast<std::size_t>(row * w));
      for (std::int64_t e = 0; e < row; ++e) {
        out.written[static_cast<std::size_t>(index + e)] =
            smem.undefined(s.smem_offset + (j + e) * w) ? 0 : 1;
      }
    }
    return;
  }
  for (std::int64_t j = 0; j < s.elements; ++j) {
    const std::int64_t index = output_index(j);
    const bool undefined = smem.undefined(s.smem_offset + packed_byte(bits, j));
    store_packed(out.bytes.data(), bits, index, load_packed(src, bits, j));
    out.written[static_cast<std::size_t>(index)] = undefined ? 0 : 1;
  }
}

}  // namespace collfuzz::sim
