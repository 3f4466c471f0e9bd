#include "harness/core/smem_layout.h"

#include <algorithm>

#include "harness/core/dtype.h"
#include "harness/core/limits.h"

namespace collfuzz {

SmemLayout smem_layout(const Alloc& a) {
  SmemLayout l;
  l.shape = a.shape;
  l.tiling = a.transforms.tiling;
  l.swizzle = a.transforms.swizzle;
  l.element_bytes = std::max<std::int64_t>(1, dtype_bits(a.dtype) / 8);
  // Transforms JAX refuses (the reference's rules) lay nothing out: no accepted case has them.
  const std::size_t k = l.tiling.size();
  bool valid = k <= l.shape.size() && dtype_bits(a.dtype) % 8 == 0;
  for (std::size_t j = 0; valid && j < k; ++j)
    valid = l.shape[l.shape.size() - k + j] % l.tiling[j] == 0;
  if (!valid) l.tiling.clear();
  const std::int64_t minor =
      l.tiling.empty() ? (l.shape.empty() ? 1 : l.shape.back()) : l.tiling.back();
  if (!valid || (l.swizzle != 32 && l.swizzle != 64 && l.swizzle != 128) ||
      minor * l.element_bytes != l.swizzle)
    l.swizzle = 0;
  return l;
}

std::int64_t physical_offset(const SmemLayout& l, std::int64_t e) {
  if (l.identity()) return e * l.element_bytes;
  const std::size_t rank = l.shape.size();
  const std::size_t k = l.tiling.size();
  // The logical coordinates, innermost first.
  std::int64_t coord[limits::kMaxRank] = {};
  for (std::size_t d = rank; d-- > 0;) {
    coord[d] = e % l.shape[d];
    e /= l.shape[d];
  }
  std::int64_t index = 0;
  // Leading (untiled) dims, then the tile counts, then the in-tile coordinates.
  for (std::size_t d = 0; d < rank - k; ++d) index = index * l.shape[d] + coord[d];
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t d = rank - k + j;
    index = index * (l.shape[d] / l.tiling[j]) + coord[d] / l.tiling[j];
  }
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t d = rank - k + j;
    index = index * l.tiling[j] + coord[d] % l.tiling[j];
  }
  return swizzled_offset(index * l.element_bytes, l.swizzle);
}

void physical_offsets(const SmemLayout& l, std::vector<std::int64_t>& out) {
  std::int64_t n = 1;
  for (std::int64_t d : l.shape) n *= d;
  out.resize(static_cast<std::size_t>(n));
  if (n == 0) return;
  const std::size_t rank = l.shape.size();
  if (l.identity() || rank == 0) {
    for (std::int64_t e = 0; e < n; ++e) out[static_cast<std::size_t>(e)] = e * l.element_bytes;
    return;
  }
  const std::size_t k = l.tiling.size();
  // physical_offset's index is a mixed-radix number over (leading dims, tile counts, in-tile
  // coordinates); the weight of each digit:
  std::vector<std::int64_t> radix;  // most significant first
  for (std::size_t d = 0; d < rank - k; ++d) radix.push_back(l.shape[d]);
  for (std::size_t j = 0; j < k; ++j) radix.push_back(l.shape[rank - k + j] / l.tiling[j]);
  for (std::size_t j = 0; j < k; ++j) radix.push_back(l.tiling[j]);
  std::vector<std::int64_t> weight(radix.size(), 1);
  for (std::size_t i = radix.size(); i-- > 1;) weight[i - 1] = weight[i] * radix[i];
  // term[d][c]: dim d's coordinate c's share of the index.
  std::vector<std::vector<std::int64_t>> term(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    term[d].resize(static_cast<std::size_t>(l.shape[d]));
    for (std::int64_t c = 0; c < l.shape[d]; ++c) {
      std::int64_t t = 0;
      if (d < rank - k) {
        t = c * weight[d];
      } else {
        const std::size_t j = d - (rank - k);
        t = (c / l.tiling[j]) * weight[rank - k + j] + (c % l.tiling[j]) * weight[rank + j];
      }
      term[d][static_cast<std::size_t>(c)] = t;
    }
  }
  std::int64_t coord[limits::kMaxRank] = {};
  const std::int64_t row = l.shape[rank - 1];
  const std::vector<std::int64_t>& inner = term[rank - 1];
  for (std::int64_t e = 0; e < n; e += row) {
    std::int64_t base = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) base += term[d][static_cast<std::size_t>(coord[d])];
    for (std::int64_t c = 0; c < row; ++c) {
      out[static_cast<std::size_t>(e + c)] =
          swizzled_offset((base + inner[static_cast<std::size_t>(c)]) * l.element_bytes, l.swizzle);
    }
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++coord[d] < l.shape[d]) break;
      coord[d] = 0;
    }
  }
}

namespace {

// Each element's bytes moved between its logical place and its physical one.
std::vector<std::uint8_t> permute(const SmemLayout& l, const std::vector<std::uint8_t>& bytes,
                                  bool logical_to_physical) {
  if (l.identity()) return bytes;
  std::vector<std::uint8_t> out(bytes.size());
  const std::int64_t n = static_cast<std::int64_t>(bytes.size()) / l.element_bytes;
  std::vector<std::int64_t> offsets;
  physical_offsets(l, offsets);
  for (std::int64_t e = 0; e < n && e < static_cast<std::int64_t>(offsets.size()); ++e) {
    const auto p = static_cast<std::size_t>(offsets[static_cast<std::size_t>(e)]);
    const auto q = static_cast<std::size_t>(e * l.element_bytes);
    const std::size_t to = logical_to_physical ? p : q;
    const std::size_t from = logical_to_physical ? q : p;
    for (std::int64_t b = 0; b < l.element_bytes; ++b)
      out[to + static_cast<std::size_t>(b)] = bytes[from + static_cast<std::size_t>(b)];
  }
  return out;
}

}  // namespace

std::vector<std::uint8_t> to_physical(const SmemLayout& l, const std::vector<std::uint8_t>& bytes) {
  return permute(l, bytes, true);
}

std::vector<std::uint8_t> to_logical(const SmemLayout& l, const std::vector<std::uint8_t>& bytes) {
  return permute(l, bytes, false);
}

Shape tiled_shape(const Shape& shape, const Shape& tiling) {
  const std::size_t k = tiling.size();
  if (k == 0 || k > shape.size()) return shape;
  const std::size_t lead = shape.size() - k;
  Shape out(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
  for (std::size_t j = 0; j < k; ++j) out.push_back(shape[lead + j] / tiling[j]);
  out.insert(out.end(), tiling.begin(), tiling.end());
  return out;
}

}  // namespace collfuzz
