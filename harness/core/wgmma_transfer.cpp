// A port of fragmented_array.py's Tiling.tile_nested_shape_strides and plan_gmem_transfer (JAX
// 0.12.0.1) for the WGMMA layout; see wgmma_transfer.h.

#include "harness/core/wgmma_transfer.h"

#include <algorithm>
#include <set>

#include "harness/core/ndarray.h"
#include "harness/core/pyrepr.h"

namespace collfuzz {
namespace {

using Nested = std::vector<std::vector<std::int64_t>>;
using Tile = std::vector<std::int64_t>;

const std::vector<Tile>& wgmma_tiles() {
  static const std::vector<Tile> tiles = {{64, 8}, {16, 8}, {8, 8}, {2}};
  return tiles;
}

// Tiling.tile_nested_shape_strides; false where the tiling does not apply.
bool tile_nested(Nested& shape, Nested& strides) {
  for (const Tile& tile : wgmma_tiles()) {
    if (tile.size() > shape.size()) return false;
    const std::size_t lead = shape.size() - tile.size();
    Nested majors, minors, major_strides, minor_strides;
    for (std::size_t k = 0; k < tile.size(); ++k) {
      std::int64_t t = tile[k];
      const auto& dim_shape = shape[lead + k];
      const auto& dim_strides = strides[lead + k];
      std::vector<std::int64_t> major_rev, major_stride_rev, minor_rev, minor_stride_rev;
      for (std::size_t j = dim_shape.size(); j-- > 0;) {
        const std::int64_t d = dim_shape[j];
        const std::int64_t s = dim_strides[j];
        if (d < t) {
          if (t % d != 0) return false;
          t /= d;
          minor_rev.push_back(d);
          minor_stride_rev.push_back(s);
        } else if (t != 1) {
          if (d % t != 0) return false;
          minor_rev.push_back(t);
          minor_stride_rev.push_back(s);
          if (d != t) {
            major_rev.push_back(d / t);
            major_stride_rev.push_back(s * t);
          }
          t = 1;
        } else {
          major_rev.push_back(d);
          major_stride_rev.push_back(s);
        }
      }
      if (t != 1) return false;
      std::reverse(major_rev.begin(), major_rev.end());
      std::reverse(major_stride_rev.begin(), major_stride_rev.end());
      std::reverse(minor_rev.begin(), minor_rev.end());
      std::reverse(minor_stride_rev.begin(), minor_stride_rev.end());
      majors.push_back(major_rev);
      major_strides.push_back(major_stride_rev);
      minors.push_back(minor_rev);
      minor_strides.push_back(minor_stride_rev);
    }
    Nested next_shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
    Nested next_strides(strides.begin(), strides.begin() + static_cast<std::ptrdiff_t>(lead));
    next_shape.insert(next_shape.end(), majors.begin(), majors.end());
    next_shape.insert(next_shape.end(), minors.begin(), minors.end());
    next_strides.insert(next_strides.end(), major_strides.begin(), major_strides.end());
    next_strides.insert(next_strides.end(), minor_strides.begin(), minor_strides.end());
    shape = std::move(next_shape);
    strides = std::move(next_strides);
  }
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k].empty()) {
      shape[k] = {1};
      strides[k] = {1};
    }
  }
  return true;
}

std::size_t dim_at(std::int64_t d, std::size_t rank) {
  return static_cast<std::size_t>(d < 0 ? static_cast<std::int64_t>(rank) + d : d);
}

}  // namespace

bool wgmma_tiling_applies(const Shape& shape) {
  return shape.size() >= 2 && shape[shape.size() - 2] % 64 == 0 &&
         shape[shape.size() - 1] % 8 == 0 && shape[shape.size() - 2] > 0 &&
         shape[shape.size() - 1] > 0;
}

std::string wgmma_tiling_error(const Shape& shape) {
  return "Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape " +
         py::tuple_of_ints(shape);
}

std::optional<std::string> wgmma_gmem_transfer_error(const Shape& shape,
                                                     const std::vector<std::int64_t>& strides,
                                                     int element_bits) {
  // store_untiled/load_untiled reshape the ref to (1, ..., 1, *shape) and transfer_tiled nests
  // each logical dim as (1, d) (or (1,) where d is 1).
  Nested nshape, nstrides;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] != 1) {
      nshape.push_back({1, shape[k]});
      nstrides.push_back({0, strides[k]});
    } else {
      nshape.push_back({1});
      nstrides.push_back({0});
    }
  }
  if (!tile_nested(nshape, nstrides)) return wgmma_tiling_error(shape);
  const std::size_t rank = nshape.size();
  // WGMMA_LAYOUT: warp_dims (-7,), lane_dims (-3, -2), vector_dim -1, vector_length 2.
  const std::size_t warp_dim = dim_at(-7, rank);
  const std::size_t lane_dims[] = {dim_at(-3, rank), dim_at(-2, rank)};
  const std::size_t vector_dim = dim_at(-1, rank);
  constexpr std::int64_t kVectorLength = 2;
  Nested tiles_shape = nshape, tiles_strides = nstrides;
  for (const std::size_t d : {warp_dim, lane_dims[0], lane_dims[1], vector_dim}) {
    std::fill(tiles_shape[d].begin(), tiles_shape[d].end(), 1);
    std::fill(tiles_strides[d].begin(), tiles_strides[d].end(), 0);
  }
  std::vector<std::int64_t> ts, tst;
  for (std::size_t d = 0; d < rank; ++d) {
    ts.insert(ts.end(), tiles_shape[d].begin(), tiles_shape[d].end());
    tst.insert(tst.end(), tiles_strides[d].begin(), tiles_strides[d].end());
  }
  const std::vector<std::int64_t> warp_shape = nshape[warp_dim];
  const std::vector<std::int64_t> warp_strides = nstrides[warp_dim];
  std::vector<std::int64_t> lane_shape, lane_strides;
  for (const std::size_t d : lane_dims) {
    lane_shape.insert(lane_shape.end(), nshape[d].begin(), nshape[d].end());
    lane_strides.insert(lane_strides.end(), nstrides[d].begin(), nstrides[d].end());
  }
  std::int64_t transfer_bytes = kVectorLength * element_bits / 8;
  if (transfer_bytes > 16)
    return std::string("GMEM transfer with per-thread vector length > 16 bytes is inefficient");
  if (transfer_bytes <= 0 || (transfer_bytes & (transfer_bytes - 1)) != 0)
    return std::string("GMEM transfer with non-power-of-2 byte length is inefficient");
  // Each lane's element offset: np.ndindex over lane_shape dotted with lane_strides.
  std::vector<std::int64_t> lane_bytes;
  {
    std::int64_t count = 1;
    for (const std::int64_t d : lane_shape) count *= d;
    for (std::int64_t i = 0; i < count; ++i) {
      std::int64_t rem = i, off = 0;
      for (std::size_t k = lane_shape.size(); k-- > 0;) {
        off += (rem % lane_shape[k]) * lane_strides[k];
        rem /= lane_shape[k];
      }
      lane_bytes.push_back(off * element_bits / 8);
    }
  }
  // The fastest changing tile dim: the smallest positive stride of a dim of more than one,
  // ties to the later dim.
  std::optional<std::size_t> minor;
  for (std::size_t d = 0; d < ts.size(); ++d) {
    if (ts[d] > 1 && tst[d] > 0 && (!minor || tst[d] <= tst[*minor])) minor = d;
  }
  if (minor && tst[*minor] == kVectorLength) {
    const std::int64_t max_factor = std::max<std::int64_t>(1, 16 / transfer_bytes);
    std::int64_t factor = std::min(max_factor, ts[*minor] & -ts[*minor]);
    while (factor > 1) {
      const bool aligned = std::all_of(lane_bytes.begin(), lane_bytes.end(), [&](std::int64_t b) {
        return b % (transfer_bytes * factor) == 0;
      });
      if (aligned) {
        ts[*minor] /= factor;
        tst[*minor] *= factor;
        transfer_bytes *= factor;
        break;
      }
      factor /= 2;
    }
  }
  if (transfer_bytes < 4) {
    return "GMEM transfer width (" + std::to_string(transfer_bytes) +
           " bytes/thread) is smaller than 4 bytes";
  }
  constexpr std::int64_t kSectorBytes = 32;
  const std::int64_t slots_per_sector = kSectorBytes / transfer_bytes;
  std::set<std::int64_t> slots, sectors;
  for (const std::int64_t b : lane_bytes) {
    slots.insert(b / transfer_bytes);
    // numpy's floor division of the slot offset (offsets are non-negative here)
    sectors.insert(b / transfer_bytes / slots_per_sector);
  }
  if (static_cast<std::int64_t>(slots.size()) !=
      static_cast<std::int64_t>(sectors.size()) * slots_per_sector) {
    return std::string("GMEM transfer does not access a whole number of complete 32 byte sectors");
  }
  std::vector<std::int64_t> dims = ts, dstrides = tst;
  dims.insert(dims.end(), warp_shape.begin(), warp_shape.end());
  dstrides.insert(dstrides.end(), warp_strides.begin(), warp_strides.end());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] > 1 && dstrides[k] != 0 && (dstrides[k] * element_bits / 8) % kSectorBytes != 0)
      return std::string("GMEM transfer stride is not aligned to 32B sector size");
  }
  constexpr std::int64_t kSectorsPerLine = 128 / kSectorBytes;
  std::vector<std::int64_t> wg(sectors.begin(), sectors.end());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] <= 1 || dstrides[k] == 0) continue;
    const std::int64_t s = dstrides[k] * element_bits / (8 * kSectorBytes);
    std::vector<std::int64_t> next;
    next.reserve(wg.size() * static_cast<std::size_t>(dims[k]));
    for (const std::int64_t o : wg)
      for (std::int64_t i = 0; i < dims[k]; ++i) next.push_back(o + i * s);
    wg = std::move(next);
  }
  std::set<std::int64_t> unique_sectors(wg.begin(), wg.end()), lines;
  for (const std::int64_t o : unique_sectors) lines.insert(o / kSectorsPerLine);
  if (static_cast<std::int64_t>(unique_sectors.size()) !=
      static_cast<std::int64_t>(lines.size()) * kSectorsPerLine) {
    return std::string(
        "GMEM transfer does not access a whole number of complete 128 byte cache lines");
  }
  return std::nullopt;
}

std::optional<std::string> wgmma_gmem_slice_error(const Shape& array_shape,
                                                  const std::vector<IndexEntry>& index,
                                                  int element_bits) {
  const ResolvedSlice slice = resolve_slice(
      array_shape, index, [](const std::string&) { return 0; }, 0);
  std::vector<std::int64_t> strides;
  std::int64_t stride = 1;
  std::vector<std::int64_t> row_major(array_shape.size());
  for (std::size_t k = array_shape.size(); k-- > 0;) {
    row_major[k] = stride;
    stride *= array_shape[k];
  }
  for (std::size_t k = 0; k < array_shape.size(); ++k)
    if (slice.size[k] != 0) strides.push_back(row_major[k]);
  return wgmma_gmem_transfer_error(slice.shape, strides, element_bits);
}

}  // namespace collfuzz
