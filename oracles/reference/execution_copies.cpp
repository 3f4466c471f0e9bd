// The reference's execution: copies into SMEM. Interpret mode's copy, cp.async, and the TMA paths
// (multicast, partitioned, replicated, bulk), with SMEM race tracking (smem_races.h).

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "oracles/reference/execution_model.h"
#include "oracles/reference/execution_writes.h"

namespace collfuzz::ref::exec {

const std::vector<std::uint8_t>& Execution::input_bytes(const ArraySpec& a) {
  auto it = inputs_.find(&a);
  if (it == inputs_.end()) it = inputs_.emplace(&a, shared_fill_bytes(a)).first;
  return *it->second;
}

void Execution::write_region(const Thread& th, const CopyFacts& f, std::int64_t dst_rank,
                             const ResolvedSlice& slice,
                             const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                             int shift_dim, std::int64_t shift, bool bulk) {
  writer_ = smem_writer(th.rank, mesh_.num_threads(), th.index);
  writing_op_ = f.op;
  const std::int64_t d_base =
      smem_ref_base(th, f.copy->dst, f.copy->dst_index, f.copy->dst_slot, f.copy->dst_slice);
  write_region_bytes(f, dst_rank, d_base, slice, region, shift_dim, shift, bulk);
}

void Execution::write_region_bytes(const CopyFacts& f, std::int64_t dst_rank, std::int64_t d_base,
                                   const ResolvedSlice& slice,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                                   int shift_dim, std::int64_t shift, bool bulk) {
  View dst = buffer(dst_rank, f.copy->dst);
  const std::vector<std::uint8_t>& src = input_bytes(*f.src);
  const int bits = static_cast<int>(f.bits_per_element);
  // Leading integer indices (and a slice) of dst select a sub-block of the allocation: d_base.
  const Strides dst_strides = row_major_rank_strides(f.dst_shape);
  const Strides src_strides = row_major_rank_strides(f.src->shape);
  // Per dst dim: the source dim's stride, size and the source index of the region's first row.
  const std::size_t rank = region.size();
  Strides s_stride{}, s_size{}, s_first{}, box{};
  std::int64_t s_const = 0;
  bool const_in_bounds = true;
  // The kept source dims in the slice's order; dst dim k takes kept dim smem_order[k] (a
  // transposed SMEM ref, CopyFacts::smem_order).
  Strides v_stride{}, v_size{}, v_start{};
  std::size_t kept = 0;
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
    if (slice.size[i] == 0) {  // squeezed: a fixed index
      s_const += slice.start[i] * src_strides[i];
      const_in_bounds = const_in_bounds && slice.start[i] >= 0 && slice.start[i] < f.src->shape[i];
      continue;
    }
    v_stride[kept] = src_strides[i];
    v_size[kept] = f.src->shape[i];
    v_start[kept] = slice.start[i];
    ++kept;
  }
  for (std::size_t k = 0; k < rank; ++k) {
    const std::size_t v = k < f.smem_order.size() ? f.smem_order[k] : k;
    s_stride[k] = v_stride[v];
    s_size[k] = v_size[v];
    s_first[k] = v_start[v] + region[k].first + (static_cast<int>(k) == shift_dim ? shift : 0);
    box[k] = region[k].second;
  }
  enum class Oob { kUndefined, kZero };
  // Interpret mode reads out-of-bounds elements as zeros whatever oob_mode says (0.11.2).
  const Oob oob = mosaic_ && (ck_.arch_major() < 9 || (bulk && f.copy->oob_mode != OobMode::kZeros))
                      ? Oob::kUndefined
                      : Oob::kZero;
  const int dst_bits = dtype_bits(dst.dtype);
  const bool same_width = dst_bits == bits && dtype_bits(f.src->dtype) == bits;
  std::uint8_t* const dbytes = dst.mem->bytes.data() + dst.offset;
  std::uint8_t* const dundef = dst.mem->undef.data() + dst.offset;
  // A run of n zero elements from element d, all marked alike.
  const auto out_of_bounds = [&](std::int64_t d, std::int64_t n) {
    if (n <= 0) return;
    if (!mosaic_ && mutant_active(Mutant::kInterpretOobFillNotZero)) {
      for (std::int64_t e = d; e < d + n; ++e) dst.store(e, 1, false);
      return;
    }
    const bool undefined = oob == Oob::kUndefined;
    dst.mem->any_undef = dst.mem->any_undef || undefined;
    if (same_width && bits >= 8) {
      const std::int64_t w = bits / 8;
      std::memset(dbytes + d * w, 0, static_cast<std::size_t>(n * w));
      std::memset(dundef + d * w, undefined ? 1 : 0, static_cast<std::size_t>(n * w));
      return;
    }
    for (std::int64_t e = d; e < d + n; ++e) {
      if (same_width && bits == 4) {  // View::store's nibble, inline
        std::uint8_t& b = dbytes[e / 2];
        b = (e % 2) ? static_cast<std::uint8_t>(b & 0x0F) : static_cast<std::uint8_t>(b & 0xF0);
        if (undefined) dundef[e / 2] = 1;
      } else {
        dst.store(e, 0, undefined);
      }
    }
  };
  const std::size_t last = rank - 1;
  const std::int64_t n = box[last];
  if (f.dst->transforms.any() && !places(*f.dst).empty()) {
    write_transformed(f, dst, d_base, slice, region, s_first, oob == Oob::kUndefined);
    return;
  }
  Strides c{};
  while (true) {
    std::int64_t s = s_const;
    std::int64_t d = d_base;
    bool in_bounds = const_in_bounds;
    for (std::size_t j = 0; j < last; ++j) {
      const std::int64_t idx = s_first[j] + c[j];
      in_bounds = in_bounds && idx >= 0 && idx < s_size[j];
      s += idx * s_stride[j];
      d += (region[j].first + c[j]) * dst_strides[j];
    }
    d += region[last].first;
    const auto [row_at, row_bytes] = byte_span(dst, d, n);
    guarded_write(*dst.mem, row_at, row_bytes, [&] {
      if (!in_bounds) {
        out_of_bounds(d, n);
      } else {
        // The run along the last dim: [lo, hi) lies inside the source.
        const std::int64_t first = s_first[last];
        const std::int64_t lo = std::clamp<std::int64_t>(-first, 0, n);
        const std::int64_t hi = std::clamp<std::int64_t>(s_size[last] - first, lo, n);
        out_of_bounds(d, lo);
        if (bits >= 8 && s_stride[last] == 1) {
          const std::int64_t width = bits / 8;
          const auto from = static_cast<std::size_t>((s + first + lo) * width);
          const auto to = static_cast<std::size_t>(dst.offset + (d + lo) * width);
          const auto len = static_cast<std::size_t>((hi - lo) * width);
          std::memcpy(dst.mem->bytes.data() + to, src.data() + from, len);
          std::fill_n(dst.mem->undef.begin() + static_cast<std::ptrdiff_t>(to), len,
                      std::uint8_t{0});
        } else if (same_width && bits == 4) {  // nibbles, as View::store writes them
          const std::int64_t stride = s_stride[last];
          for (std::int64_t e = lo; e < hi; ++e) {
            const std::int64_t si = s + (first + e) * stride;
            const auto nib = static_cast<std::uint8_t>(
                (src[static_cast<std::size_t>(si / 2)] >> (si % 2 ? 4 : 0)) & 0xF);
            const std::int64_t di = d + e;
            std::uint8_t& b = dbytes[di / 2];
            b = (di % 2) ? static_cast<std::uint8_t>((b & 0x0F) | (nib << 4))
                         : static_cast<std::uint8_t>((b & 0xF0) | nib);
          }
        } else {
          for (std::int64_t e = lo; e < hi; ++e) {
            dst.store(d + e, load_element(src, f.src->dtype, s + (first + e) * s_stride[last]),
                      false);
          }
        }
        out_of_bounds(d + hi, n - hi);
      }
    });
    // Next row: an odometer over every dim but the last.
    std::size_t j = last;
    while (j > 0) {
      --j;
      if (++c[j] < box[j]) break;
      c[j] = 0;
      if (j == 0) return;
    }
    if (last == 0) return;
  }
}

namespace {

// The tile of dst dim k of a tiled copy (0: untiled).
std::int64_t dim_tile(const CopyFacts& f, std::size_t k) {
  const Shape& tiling = f.dst->transforms.tiling;
  const std::size_t rank = f.dst_shape.size();
  if (tiling.empty() || k + tiling.size() < rank) return 0;
  return tiling[k + tiling.size() - rank];
}

// The GMEM slice's start along the source dim of dst dim k.
std::int64_t slice_start_of(const CopyFacts& f, const ResolvedSlice& slice, std::size_t k) {
  const std::size_t v = k < f.smem_order.size() ? f.smem_order[k] : k;
  for (std::size_t i = 0, j = 0; i < f.src->shape.size(); ++i) {
    if (slice.size[i] == 0) continue;
    if (j++ == v) return slice.start[i];
  }
  return 0;
}

}  // namespace

// A tiled TMA addresses GMEM as (base / t + i / t, base % t + i % t) per tiled dim (TileTransform's
// unsigned divui/remui of the slice's start): a start that is not a whole tile reads zeros where
// the place within the tile passes the tile, and a negative start is a huge unsigned index, all out
// of bounds. Interpret mode reads the slice as written. Each element lands at its physical place.
void Execution::write_transformed(const CopyFacts& f, View& dst, std::int64_t d_base,
                                  const ResolvedSlice& slice,
                                  const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                                  const Strides& s_first, bool undefined_oob) {
  const std::vector<std::int64_t>& place = places(*f.dst);
  const std::int64_t width = dtype_bits(f.dst->dtype) / 8;
  const std::vector<std::uint8_t>& src = input_bytes(*f.src);
  const Strides dst_strides = row_major_rank_strides(f.dst_shape);
  const Strides src_strides = row_major_rank_strides(f.src->shape);
  const std::size_t rank = region.size();
  std::int64_t s_const = 0;
  std::array<std::size_t, limits::kMaxRank> kept_dim{};  // the kept source dims, in order
  std::size_t kept = 0;
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
    if (slice.size[i] == 0) {
      s_const += slice.start[i] * src_strides[i];
    } else if (kept < kept_dim.size()) {
      kept_dim[kept++] = i;
    }
  }
  std::array<std::size_t, limits::kMaxRank> src_dim{};  // the source dim of each region dim
  for (std::size_t k = 0; k < region.size() && k < src_dim.size(); ++k)
    src_dim[k] = kept_dim[k < f.smem_order.size() ? f.smem_order[k] : k];
  // Every element's physical place and value first; then the places in order, claimed as runs
  // of contiguous bytes (a whole tile is one run), so that race tracking sees the bytes written.
  // The places are distinct, so "in order" is a scatter into a table of the span they cover, not
  // a sort; both tables are reused across copies (the campaign's hot path allocates neither).
  struct Placed {
    std::int64_t place;   // element index in the buffer's physical order
    std::int64_t source;  // element index in the input; -1: out of bounds
  };
  constexpr std::int64_t kUnwritten = -2;
  thread_local std::vector<Placed> placed;
  thread_local std::vector<std::int64_t> source_at;  // by place - lo: the source, or kUnwritten
  placed.clear();
  std::array<std::int64_t, limits::kMaxRank> c{};
  std::array<std::int64_t, limits::kMaxRank> tile{};
  std::array<std::int64_t, limits::kMaxRank> base{};
  std::int64_t total = 1;
  for (const auto& r : region) total *= r.second;
  placed.reserve(static_cast<std::size_t>(total));
  for (std::size_t k = 0; k < rank; ++k) {
    tile[k] = mosaic_ ? dim_tile(f, k) : 0;
    if (tile[k] > 0) base[k] = slice_start_of(f, slice, k);
  }
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = -1;
  if (total == 0) return;
  if (rank == 0) {  // one element: the copy indexes every dim
    lo = hi = place[static_cast<std::size_t>(d_base)] / width;
    placed.push_back(Placed{lo, s_const});
  }
  // Row by row (an odometer over every dim but the last): each row's source and destination
  // offsets and its bounds along the outer dims once, then the last dim's elements with its
  // place within the tile carried along instead of a remainder per element.
  const std::size_t last = rank > 0 ? rank - 1 : 0;
  const std::int64_t n = rank > 0 ? region[last].second : total + 1;  // rank 0: no row below
  const std::int64_t last_tile = tile[last];
  const std::int64_t last_src_size = rank > 0 ? f.src->shape[src_dim[last]] : 0;
  const std::int64_t last_src_stride = rank > 0 ? src_strides[src_dim[last]] : 0;
  const std::int64_t last_dst_stride = rank > 0 ? dst_strides[last] : 0;
  const int width_shift = std::countr_zero(static_cast<std::uint64_t>(width));  // 1, 2, 4 or 8
  const bool last_base_ok = last_tile == 0 || base[last] >= 0;
  const std::int64_t last_base_mod = last_tile > 0 ? base[last] % last_tile : 0;
  for (std::int64_t row = 0; row < total / n; ++row) {
    std::int64_t s_row = s_const;
    std::int64_t d_row = d_base;
    bool row_in_bounds = last_base_ok;
    for (std::size_t k = 0; k < last; ++k) {
      const std::int64_t within = region[k].first + c[k];  // in the dst ref
      const std::int64_t idx = s_first[k] + c[k];
      if (tile[k] > 0) {
        row_in_bounds =
            row_in_bounds && base[k] >= 0 && base[k] % tile[k] + within % tile[k] < tile[k];
      }
      row_in_bounds = row_in_bounds && idx >= 0 && idx < f.src->shape[src_dim[k]];
      s_row += idx * src_strides[src_dim[k]];
      d_row += within * dst_strides[k];
    }
    const std::int64_t w0 = region[last].first;
    std::int64_t in_tile = last_tile > 0 ? w0 % last_tile : 0;  // (w0 + e) % last_tile
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t idx = s_first[last] + e;
      const bool in_bounds = row_in_bounds && idx >= 0 && idx < last_src_size &&
                             (last_tile == 0 || last_base_mod + in_tile < last_tile);
      // d: in the allocation's logical order.
      const std::int64_t d = d_row + (w0 + e) * last_dst_stride;
      const std::int64_t p = place[static_cast<std::size_t>(d)] >> width_shift;
      placed.push_back(Placed{p, in_bounds ? s_row + idx * last_src_stride : -1});
      lo = std::min(lo, p);
      hi = std::max(hi, p);
      if (last_tile > 0 && ++in_tile == last_tile) in_tile = 0;
    }
    for (std::size_t k = last; k-- > 0;) {
      if (++c[k] < region[k].second) break;
      c[k] = 0;
    }
  }
  if (placed.empty()) return;
  source_at.assign(static_cast<std::size_t>(hi - lo + 1), kUnwritten);
  for (const Placed& pl : placed) source_at[static_cast<std::size_t>(pl.place - lo)] = pl.source;
  const auto w = static_cast<std::size_t>(width);
  for (std::int64_t i = 0; i <= hi - lo;) {
    if (source_at[static_cast<std::size_t>(i)] == kUnwritten) {
      ++i;
      continue;
    }
    std::int64_t j = i + 1;
    while (j <= hi - lo && source_at[static_cast<std::size_t>(j)] != kUnwritten) ++j;
    const auto [at, bytes] = byte_span(dst, lo + i, j - i);
    guarded_write(*dst.mem, at, bytes, [&] {
      // Whole bytes per element (the parser refuses transforms on sub-byte dtypes), the same
      // dtype on both sides (copy.dtype_mismatch): the element's bytes as they are.
      // Runs of consecutive sources (a tile's row, a swizzle's 16-byte chunk) in one memcpy.
      for (std::int64_t k = i; k < j;) {
        const std::int64_t source = source_at[static_cast<std::size_t>(k)];
        std::int64_t m = k + 1;
        if (source >= 0) {
          while (m < j && source_at[static_cast<std::size_t>(m)] == source + (m - k)) ++m;
        } else {
          while (m < j && source_at[static_cast<std::size_t>(m)] < 0) ++m;
        }
        const auto to = static_cast<std::size_t>(dst.offset + (lo + k) * width);
        const auto len = static_cast<std::size_t>(m - k) * w;
        if (source >= 0) {
          std::memcpy(dst.mem->bytes.data() + to, src.data() + static_cast<std::size_t>(source) * w,
                      len);
          std::memset(dst.mem->undef.data() + to, 0, len);
        } else {
          std::memset(dst.mem->bytes.data() + to, 0, len);
          std::memset(dst.mem->undef.data() + to, undefined_oob ? 1 : 0, len);
        }
        k = m;
      }
      dst.mem->any_undef = dst.mem->any_undef || undefined_oob;
    });
    i = j;
  }
}

void Execution::copy_interpret(const Thread& th, const CopyFacts& f) {
  const CopyGmemToSmem& cp = *f.copy;
  write_region(th, f, th.rank, src_slice(f, th), whole(f.dst_shape), -1, 0, false);
  arrive(th.rank, cp.barrier->alloc, barrier_index_at(*cp.barrier, iteration_), 1, 0, f.op->path);
}

void Execution::copy_cp_async(const Thread& th, const CopyFacts& f) {
  const ResolvedSlice slice = src_slice(f, th);
  const auto strides = row_major_strides(f.src->shape);
  std::int64_t base = 0;
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) base += slice.start[i] * strides[i];
  const std::int64_t total = element_count(f.src->shape);
  const std::vector<std::uint8_t>& src = input_bytes(*f.src);
  View dst = buffer(th.rank, f.copy->dst);
  const std::int64_t d_base =
      smem_ref_base(th, f.copy->dst, f.copy->dst_index, f.copy->dst_slot, f.copy->dst_slice);
  const std::int64_t n = element_count(f.dst_shape);
  writer_ = smem_writer(th.rank, mesh_.num_threads(), th.index);
  const auto [at, bytes] = byte_span(dst, d_base, n);
  guarded_write(*dst.mem, at, bytes, [&] {
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t g = base + e;
      if (g >= 0 && g < total) {
        dst.store(d_base + e, load_element(src, f.src->dtype, g), false);
      } else {
        dst.store(d_base + e, 0, true);
      }
    }
  });
}

void Execution::copy_tma(const Thread& th, const CopyFacts& f) {
  const CopyGmemToSmem& cp = *f.copy;
  const bool pred = !cp.predicate || eval_cond(*cp.predicate, mesh_, th.rank, th.index);
  const std::string& bar = cp.barrier->alloc;
  const std::int64_t bidx = barrier_index_at(*cp.barrier, iteration_);
  const std::int64_t D = f.bytes;
  ResolvedSlice slice = src_slice(f, th);
  // LaunchContext drops dims of size 1 in both GMEM and the slice, with their index: an
  // out-of-bounds start there reads element 0.
  for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
    if (f.src->shape[i] == 1 && slice.size[i] <= 1) slice.start[i] = 0;
  }
  // A tiled dim's count of tiles is such a dim where the array holds at most one tile and the
  // slice is one tile: TileTransform splits the start into (start / t, start % t), and the
  // dropped count loses its part.
  const Shape& tiling = f.dst->transforms.tiling;
  if (!tiling.empty()) {
    const std::vector<std::size_t> sliced = kept_dims_in_smem_order(f);
    for (std::size_t j = 0; j < tiling.size() && j < sliced.size(); ++j) {
      const std::size_t i = sliced[sliced.size() - tiling.size() + j];
      const std::int64_t t = tiling[j];
      const std::int64_t g = f.src->shape[i];
      if (g / std::min(t, g) == 1 && slice.size[i] / t == 1 && slice.start[i] >= 0)
        slice.start[i] %= t;
    }
  }
  auto cached = bulk_.find(&f);
  if (cached == bulk_.end()) cached = bulk_.emplace(&f, bulk_path(f, tma_shape(f))).first;
  const bool bulk = cached->second;
  const std::int64_t i = group_index(mesh_, f.dims, th.rank);

  if (f.leader && f.n == 2) {
    // PARTITIONED / REPLICATED over a 2-CTA cluster: only the leader (group index 0) arms its
    // barrier, with the bytes of both CTAs; every completion lands on the leader's barrier.
    std::int64_t leader = th.rank;
    for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
      if (same_group(mesh_, f.dims, r, th.rank) && group_index(mesh_, f.dims, r) == 0) leader = r;
    }
    if (i == 0) arm(th.rank, f, 2 * D, pred);
    if (!pred) return;
    if (cp.leader_tracked == LeaderTracked::kPartitioned) {
      // The partitioned dim of the ref the copy sees, in the SMEM ref's own dims.
      const int p = static_cast<int>(
          f.transpose ? f.transpose->permutation[static_cast<std::size_t>(cp.partition_axis)]
                      : cp.partition_axis);
      write_region(th, f, th.rank, slice, whole(f.dst_shape), p,
                   i * f.dst_shape[static_cast<std::size_t>(p)], bulk);
      complete_tx(leader, bar, bidx, D);
    } else {
      const auto region = *multicast_region(f, 2, i);
      std::int64_t chunk = f.bits_per_element;
      for (const auto& [s, n] : region) chunk *= n;
      for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
        if (!same_group(mesh_, f.dims, r, th.rank)) continue;
        write_region(th, f, r, slice, region, -1, 0, bulk);
        complete_tx(leader, bar, bidx, chunk / 8);
      }
    }
    return;
  }
  // Leader tracking over a size-1 axis: every CTA is "first", arms twice the bytes, and the
  // copy is a plain one (spec 3.5, derived): the barrier never balances.
  const std::int64_t armed = f.leader ? 2 * D : D;
  arm(th.rank, f, armed, pred);
  if (!pred) return;
  if (f.n > 1) {
    const auto region = *multicast_region(f, f.n, i);
    std::int64_t chunk = f.bits_per_element;
    for (const auto& [s, n] : region) chunk *= n;
    const auto targets = multicast_targets(mesh_, f.dims, th.rank);
    check_multicast_in_cluster(targets, mesh_.num_ctas(), f.op->path, th.rank);
    for (const std::int64_t r : targets) {
      write_region(th, f, r, slice, region, -1, 0, bulk);
      complete_tx(r, bar, bidx, chunk / 8);
    }
    return;
  }
  write_region(th, f, th.rank, slice, whole(f.dst_shape), -1, 0, bulk);
  if (bulk && cp.oob_mode != OobMode::kPromiseInBounds) {
    // The bulk path clamps its transfer to the array's end, min(D, bytes(total - minui(offset,
    // total))), and first completes the barrier with the bytes it leaves out
    // (mbarrier.complete_tx, launch_context.py), then the copy lands: two completions, between
    // which a phase may end.
    const auto strides = row_major_strides(f.src->shape);
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < f.src->shape.size(); ++k) offset += slice.start[k] * strides[k];
    const std::int64_t total = element_count(f.src->shape);
    const std::int64_t remaining = total - (offset < 0 ? total : std::min(offset, total));
    const std::int64_t bits = f.bits_per_element;
    const std::int64_t remaining_bytes =
        bits >= 8 ? remaining * (bits / 8) : remaining / (8 / bits);
    const std::int64_t clamped = std::min(D, remaining_bytes);
    complete_tx(th.rank, bar, bidx, D - clamped);
    complete_tx(th.rank, bar, bidx, clamped);
    return;
  }
  complete_tx(th.rank, bar, bidx, D);
}

}  // namespace collfuzz::ref::exec
