#include "oracles/reference/copy_facts.h"

#include <algorithm>
#include <tuple>

#include "harness/core/ndarray.h"
#include "oracles/reference/mesh_facts.h"

namespace collfuzz::ref {

Shape smem_ref_shape(const Alloc& a, std::size_t num_indices,
                     const std::optional<IndexEntry>& slice) {
  Shape shape(a.shape.begin() + static_cast<std::ptrdiff_t>(num_indices), a.shape.end());
  if (slice && !shape.empty()) shape[0] = slice->size;
  return shape;
}

std::vector<TiledDim> tile_dims(const Shape& shape, const Shape& tiling) {
  std::vector<TiledDim> out;
  const std::size_t k = tiling.size();
  const std::size_t lead = shape.size() >= k ? shape.size() - k : 0;
  for (std::size_t d = 0; d < lead; ++d) out.push_back(TiledDim{d, 0, false, shape[d]});
  for (std::size_t d = lead; d < shape.size(); ++d) {
    const std::int64_t t = tiling[d - lead];
    out.push_back(TiledDim{d, t, false, shape[d] / t});
  }
  for (std::size_t d = lead; d < shape.size(); ++d) {
    const std::int64_t t = tiling[d - lead];
    out.push_back(TiledDim{d, t, true, t});
  }
  return out;
}

namespace {

void set_transpose(CopyFacts& f, const std::optional<SmemTranspose>& t) {
  f.transpose = t ? &*t : nullptr;
  f.view_shape = transposed_shape(f.dst_shape, t);
  f.smem_order.resize(f.dst_shape.size());
  for (std::size_t k = 0; k < f.dst_shape.size(); ++k) {
    const std::size_t j = t ? static_cast<std::size_t>(t->permutation[k]) : k;
    if (j < f.smem_order.size()) f.smem_order[j] = k;
  }
}

}  // namespace

CopyFacts copy_facts(const Op& op, const CopyGmemToSmem& copy, const Case& c, const Scope& scope) {
  CopyFacts f;
  f.op = &op;
  f.copy = &copy;
  for (const auto& in : c.inputs) {
    if (in.name == copy.src) f.src = &in;
  }
  f.dst = scope.allocs.at(copy.dst);
  if (copy.barrier) f.barrier = scope.allocs.at(copy.barrier->alloc);
  f.squeezed.assign(f.src->shape.size(), false);
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
    if (i < copy.src_index.size()) {
      const IndexEntry& e = copy.src_index[i];
      if (e.kind == IndexEntry::Kind::kAt) {
        f.squeezed[i] = true;
        continue;
      }
      f.src_shape.push_back(e.size);
    } else {
      f.src_shape.push_back(f.src->shape[i]);
    }
  }
  f.dst_shape = smem_ref_shape(*f.dst, copy.dst_index.size(), copy.dst_slice);
  set_transpose(f, copy.dst_transpose);
  f.bits_per_element = dtype_bits(f.dst->dtype);
  f.dst_bits = element_count(f.dst_shape) * f.bits_per_element;
  f.bytes = f.dst_bits / 8;
  f.leader_tracked = copy.leader_tracked;
  f.partition_axis = copy.partition_axis;
  f.oob_mode = copy.oob_mode;
  return f;
}

CopyFacts store_facts(const Op& op, const CopySmemToGmem& copy, const Case& c, const Scope& scope) {
  CopyFacts f;
  f.op = &op;
  f.is_store = true;
  for (const auto& out : c.outputs) {
    if (out.name == copy.dst) f.src = &out;
  }
  f.dst = scope.allocs.at(copy.src);
  f.squeezed.assign(f.src->shape.size(), false);
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
    if (i < copy.dst_index.size() && copy.dst_index[i].kind == IndexEntry::Kind::kAt) {
      f.squeezed[i] = true;
      continue;
    }
    f.src_shape.push_back(i < copy.dst_index.size() ? copy.dst_index[i].size : f.src->shape[i]);
  }
  f.dst_shape = smem_ref_shape(*f.dst, copy.src_index.size(), copy.src_slice);
  set_transpose(f, copy.src_transpose);
  f.bits_per_element = dtype_bits(f.dst->dtype);
  f.dst_bits = element_count(f.dst_shape) * f.bits_per_element;
  f.bytes = f.dst_bits / 8;
  f.oob_mode = OobMode::kUndefined;
  f.reduction_op = copy.reduction_op;
  return f;
}

void resolve_collective(CopyFacts& f, const MeshFacts& mesh) {
  f.dims.clear();
  f.n = 1;
  if (f.copy && f.copy->collective_axes) {
    for (const auto& a : *f.copy->collective_axes) {
      const int d = *mesh.cluster_dim(a);
      f.dims.push_back(d);
      f.n *= mesh.cuda_cluster()[static_cast<std::size_t>(d)];
    }
  }
  f.leader = !f.dims.empty() && f.leader_tracked != LeaderTracked::kNone;
}

std::vector<std::size_t> kept_dims_in_smem_order(const CopyFacts& f) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < f.squeezed.size(); ++i)
    if (!f.squeezed[i]) kept.push_back(i);
  if (f.smem_order.size() != kept.size()) return kept;
  std::vector<std::size_t> ordered;
  for (const std::size_t v : f.smem_order) ordered.push_back(kept[v]);
  return ordered;
}

TmaShape tma_shape(const CopyFacts& f) {
  const Shape& array = f.src->shape;
  Shape slice = f.src_shape;
  if (f.leader_tracked == LeaderTracked::kPartitioned && f.n > 1) {
    slice[static_cast<std::size_t>(f.partition_axis)] /= f.n;
  }
  const auto strides = row_major_strides(array);
  std::vector<std::int64_t> gmem_t;
  std::vector<std::int64_t> slice_t;
  std::vector<std::int64_t> stride_t;
  std::size_t num_squeezed = 0;
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (!f.squeezed[i]) continue;
    gmem_t.push_back(array[i]);
    slice_t.push_back(1);
    stride_t.push_back(strides[i]);
    ++num_squeezed;
  }
  // The kept dims in the SMEM ref's order (a transposed ref's TransposeTransform, batched over
  // the squeezed dims).
  const std::vector<std::size_t> kept = kept_dims_in_smem_order(f);
  for (std::size_t v = 0; v < kept.size(); ++v) {
    const std::size_t i = kept[v];
    gmem_t.push_back(array[i]);
    slice_t.push_back(slice[f.smem_order.empty() ? v : f.smem_order[v]]);
    stride_t.push_back(strides[i]);
  }
  TmaShape t;
  const Shape& tiling = f.dst->transforms.tiling;
  if (!tiling.empty() && tiling.size() <= slice_t.size()) {
    // TileTransform: the trailing dims split into tile counts, then positions within a tile. The
    // GMEM side clamps a tile to a dim it exceeds (transform_gmem_shape).
    const std::size_t lead = slice_t.size() - tiling.size();
    std::vector<std::int64_t> g2(gmem_t.begin(),
                                 gmem_t.begin() + static_cast<std::ptrdiff_t>(lead));
    std::vector<std::int64_t> s2(slice_t.begin(),
                                 slice_t.begin() + static_cast<std::ptrdiff_t>(lead));
    std::vector<std::int64_t> st2(stride_t.begin(),
                                  stride_t.begin() + static_cast<std::ptrdiff_t>(lead));
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t j = 0; j < tiling.size(); ++j) {
        const std::size_t i = lead + j;
        const std::int64_t tg = std::min(tiling[j], gmem_t[i]);
        if (pass == 0) {
          g2.push_back(gmem_t[i] / tg);
          s2.push_back(slice_t[i] / tiling[j]);
          st2.push_back(stride_t[i] * tg);
        } else {
          g2.push_back(tg);
          s2.push_back(tiling[j]);
          st2.push_back(stride_t[i]);
        }
      }
    }
    gmem_t = std::move(g2);
    slice_t = std::move(s2);
    stride_t = std::move(st2);
  }
  t.tiled_gmem = gmem_t;
  std::size_t squeezed_left = 0;
  for (std::size_t i = 0; i < slice_t.size(); ++i) {
    if (gmem_t[i] == 1 && slice_t[i] == 1) continue;
    t.slice.push_back(slice_t[i]);
    t.strides.push_back(stride_t[i]);
    if (i < num_squeezed) ++squeezed_left;
  }
  if (t.slice.size() > 5 && squeezed_left > 0) {
    // CollapseLeadingIndicesTransform folds the squeezed dims into one.
    const auto n = static_cast<std::ptrdiff_t>(squeezed_left);
    t.slice.erase(t.slice.begin(), t.slice.begin() + n);
    t.strides.erase(t.strides.begin(), t.strides.begin() + n);
    t.slice.insert(t.slice.begin(), 1);
    t.strides.insert(t.strides.begin(), 1);
  }
  return t;
}

bool bulk_path(const CopyFacts& f, const TmaShape& t) {
  bool contiguous = !t.strides.empty() && t.strides.back() == 1;
  std::int64_t expected = 1;
  for (std::size_t i = t.slice.size(); i-- > 0 && contiguous;) {
    if (t.slice[i] != 1 && t.strides[i] != expected) contiguous = false;
    expected *= t.slice[i];
  }
  const OobMode oob = f.oob_mode.value_or(OobMode::kZeros);
  return contiguous && f.dst->transforms.swizzle == 0 && f.n == 1 && oob != OobMode::kZeros &&
         f.leader_tracked == LeaderTracked::kNone && !f.reduction_op;
}

std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> multicast_chunk(
    const Shape& dst_shape, std::int64_t n, std::int64_t i) {
  std::vector<std::pair<std::int64_t, std::int64_t>> region;
  for (auto d : dst_shape) region.emplace_back(0, d);
  std::int64_t rem = n;
  for (std::size_t d = 0; d < dst_shape.size() && rem > 1; ++d) {
    const std::int64_t size = dst_shape[d];
    if (size % rem == 0) {
      const std::int64_t chunk = size / rem;
      region[d] = {i * chunk, chunk};
      rem = 1;
    } else if (rem % size == 0) {
      if (size > 1) {
        region[d] = {i % size, 1};
        i /= size;
        rem /= size;
      }
    } else {
      break;
    }
  }
  if (rem > 1) return std::nullopt;
  return region;
}

std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> multicast_region(
    const CopyFacts& f, std::int64_t n, std::int64_t i) {
  const Shape& tiling = f.dst->transforms.tiling;
  if (tiling.empty() && f.dst->transforms.swizzle == 0) return multicast_chunk(f.dst_shape, n, i);
  // _prepare_tma splits the tiled slice, never its minor dim when swizzled.
  std::vector<TiledDim> dims = tile_dims(f.dst_shape, tiling);
  std::vector<std::pair<std::int64_t, std::int64_t>> part;
  for (const TiledDim& d : dims) part.emplace_back(0, d.size);
  const std::size_t splittable =
      f.dst->transforms.swizzle != 0 && !dims.empty() ? dims.size() - 1 : dims.size();
  std::int64_t rem = n;
  for (std::size_t k = 0; k < splittable && rem > 1; ++k) {
    const std::int64_t size = dims[k].size;
    if (size % rem == 0) {
      part[k] = {i * (size / rem), size / rem};
      rem = 1;
    } else if (rem % size == 0) {
      if (size > 1) {
        part[k] = {i % size, 1};
        i /= size;
        rem /= size;
      }
    } else {
      break;
    }
  }
  if (rem > 1) return std::nullopt;
  // Back to the ref's own dims: a tiled dim's tile counts and in-tile positions make one range.
  std::vector<std::pair<std::int64_t, std::int64_t>> region;
  for (auto d : f.dst_shape) region.emplace_back(0, d);
  for (std::size_t d = 0; d < f.dst_shape.size(); ++d) {
    std::int64_t count_start = 0, count_size = 1, in_start = 0, in_size = 1, tile = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      if (dims[k].dim != d) continue;
      if (dims[k].tile == 0) {
        region[d] = part[k];
      } else if (!dims[k].in_tile) {
        std::tie(count_start, count_size) = part[k];
        tile = dims[k].tile;
      } else {
        std::tie(in_start, in_size) = part[k];
      }
    }
    if (tile == 0) continue;
    region[d] = in_size == tile ? std::pair{count_start * tile, count_size * tile}
                                : std::pair{count_start * tile + in_start, in_size};
  }
  return region;
}

std::int64_t group_index(const MeshFacts& mesh, const std::vector<int>& dims, std::int64_t rank) {
  std::vector<int> sorted = dims;
  std::stable_sort(sorted.begin(), sorted.end());
  std::int64_t idx = 0;
  std::int64_t stride = 1;
  for (int d : sorted) {
    idx += mesh.cuda_coord(rank, d) * stride;
    stride *= mesh.cuda_cluster()[static_cast<std::size_t>(d)];
  }
  return idx;
}

bool same_group(const MeshFacts& mesh, const std::vector<int>& dims, std::int64_t a,
                std::int64_t b) {
  for (int d = 0; d < 3; ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    if (mesh.cuda_coord(a, d) != mesh.cuda_coord(b, d)) return false;
  }
  return true;
}

std::vector<std::int64_t> multicast_targets(const MeshFacts& mesh, const std::vector<int>& dims,
                                            std::int64_t rank) {
  const auto& cl = mesh.cuda_cluster();
  const std::array<std::int64_t, 3> stride{1, cl[0], cl[0] * cl[1]};
  std::int64_t shift = 0;
  for (int d = 0; d < 3; ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      shift += mesh.cuda_coord(rank, d) * stride[static_cast<std::size_t>(d)];
  }
  // The offsets sum(i_k * stride(d_k)) over every index of the collective sub-grid; a repeated dim
  // contributes twice, so the set reaches past the CTA's own group. Only bits below 16 survive.
  std::uint32_t offsets = 1;
  for (int d : dims) {
    std::uint32_t next = 0;
    for (std::int64_t i = 0; i < cl[static_cast<std::size_t>(d)]; ++i) {
      const std::int64_t by = i * stride[static_cast<std::size_t>(d)];
      if (by < 16) next |= offsets << by;
    }
    offsets = next & 0xFFFFu;
  }
  const std::uint32_t mask = shift < 16 ? (offsets << shift) & 0xFFFFu : 0;
  std::vector<std::int64_t> targets;
  for (std::int64_t r = 0; r < 16; ++r) {
    if (mask >> r & 1u) targets.push_back(r);
  }
  return targets;
}

}  // namespace collfuzz::ref
