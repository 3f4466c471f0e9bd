#include "harness/sim/tma_transfer.h"

#include <algorithm>
#include <cstring>

#include "harness/core/fill.h"
#include "harness/core/reduction.h"
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

}  // namespace

// Writes the transfer into `smem` at the load's offset: the box row by row (the innermost
// dim), out-of-bounds elements as zeros. Trailing dims the box covers whole and that are
// contiguous in GMEM are merged first, so that a row is as long as it can be.
void write_tensor(SharedMemory& smem, const GmemArray& src, const lowering::LoadOp& load) {
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
