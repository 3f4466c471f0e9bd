// The reference's execution: run_scoped scopes. Allocation and release, interpret mode's
// cluster barriers and its barrier reallocation check (0.12.0.1), buffer snapshots.

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

// Where each logical element of a transformed SMEM buffer lies (spec: docs/case-format.md, "SMEM
// transforms"), written as the spec states it: the element's place in the tiled shape, then the
// swizzle as a permutation of the 16-byte chunks of each 128-byte row by the row's index within
// its pattern of S/16 rows. Per logical element, its first byte; empty for transforms JAX
// refuses (no accepted case has them).
std::vector<std::int64_t> physical_places(const Alloc& a) {
  const Shape& tiling = a.transforms.tiling;
  const std::int64_t width = dtype_bits(a.dtype) / 8;
  const std::size_t rank = a.shape.size();
  const std::size_t k = tiling.size();
  if (width == 0 || k > rank) return {};
  for (std::size_t j = 0; j < k; ++j) {
    if (a.shape[rank - k + j] % tiling[j] != 0) return {};
  }
  const std::int64_t s = a.transforms.swizzle;
  const std::int64_t minor = k ? tiling.back() : a.shape.back();
  const bool swizzled = (s == 32 || s == 64 || s == 128) && minor * width == s;
  Shape tiled_shape(a.shape.begin(), a.shape.end() - static_cast<std::ptrdiff_t>(k));
  for (std::size_t j = 0; j < k; ++j) tiled_shape.push_back(a.shape[rank - k + j] / tiling[j]);
  tiled_shape.insert(tiled_shape.end(), tiling.begin(), tiling.end());
  const auto tiled_strides = row_major_strides(tiled_shape);
  const std::int64_t n = element_count(a.shape);
  std::vector<std::int64_t> places(static_cast<std::size_t>(n));
  std::vector<std::int64_t> coord(rank, 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t place = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      if (d + k < rank) {
        place += coord[d] * tiled_strides[d];
      } else {
        const std::size_t j = d + k - rank;
        place += coord[d] / tiling[j] * tiled_strides[rank - k + j] +
                 coord[d] % tiling[j] * tiled_strides[rank + j];
      }
    }
    std::int64_t byte = place * width;
    if (swizzled) {
      const std::int64_t row = byte / 128;
      const std::int64_t chunk = (byte % 128) / 16 ^ (row % (s / 16));
      byte = row * 128 + chunk * 16 + byte % 16;
    }
    places[static_cast<std::size_t>(e)] = byte;
    for (std::size_t d = rank; d-- > 0;) {  // next logical element
      if (++coord[d] < a.shape[d]) break;
      coord[d] = 0;
    }
  }
  return places;
}

const std::vector<std::int64_t>& Execution::places(const Alloc& a) {
  auto it = places_.find(&a);
  if (it == places_.end()) it = places_.emplace(&a, physical_places(a)).first;
  return it->second;
}

void Execution::enter(const Thread& th, const Op& op, const RunScoped& rs) {
  Cta& x = cta(th.rank);
  if (realloc_checked_) realloc_on_allocate(th, op, rs);
  for (const Alloc& a : rs.allocs) {
    std::int64_t& refs = x.live_refs[a.name];
    if (refs > 0) continue;  // already allocated by another thread of the block
    refs = rs.collective_axes.empty() ? 1 : mesh_.num_threads();
    if (a.kind == AllocKind::kSmem) {
      if (!mosaic_) {
        x.buffers[a.name].reset(
            static_cast<std::size_t>(packed_bytes(element_count(a.shape), a.dtype)));
      } else {
        // A new allocation's bytes have no writer yet: the scopes before it are over (its
        // stale bytes keep their undefined marks).
        const auto at = static_cast<std::size_t>(smem_offset_.at(a.name));
        smem_forget_writers(
            x.smem.spans, x.smem.writers, at,
            at + static_cast<std::size_t>(packed_bytes(element_count(a.shape), a.dtype)));
      }
      if (!x.buffer_record_index.count(a.name)) {
        x.buffer_record_index[a.name] = x.buffer_records.size();
        x.buffer_records.push_back(BufferRecord{a.name, {}, false, true});
      }
    } else if (a.kind == AllocKind::kBarrier) {
      if (!mosaic_) {
        x.barriers[a.name].assign(static_cast<std::size_t>(a.num_barriers),
                                  InterpretBarrier(a.num_arrivals));
      }
      for (std::int64_t i = 0; i < a.num_barriers; ++i) note_state(th.rank, a.name, i);
    } else if (a.kind == AllocKind::kClusterBarrier) {
      if (!mosaic_) enter_cluster_barrier(th, op, a);
      for (std::int64_t i = 0; i < a.num_barriers; ++i) note_state(th.rank, a.name, i);
    }
  }
}

void Execution::enter_cluster_barrier(const Thread& th, const Op& op, const Alloc& a) {
  const auto key = std::make_pair(std::int64_t{-1}, a.name);
  if (ref_counts_.count(key) && ref_counts_[key] > 0) return;
  for (const AxisName& axis : a.collective_axes) {
    const bool thread_axis =
        mesh_.thread_name() && !axis.is_tuple && axis.as_plain() == *mesh_.thread_name();
    ck_.check(RuleId::kRunClusterBarrierThreadAxis, thread_axis, op.path);
  }
  for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
    cta(r).barriers[a.name].assign(static_cast<std::size_t>(a.num_barriers),
                                   InterpretBarrier(barrier_count(a)));
  }
  ref_counts_[key] = mesh_.num_ctas() * mesh_.num_threads();
  (void)th;
}

void Execution::leave(const Thread& th, const Op& op, const RunScoped& rs) {
  Cta& x = cta(th.rank);
  for (const Alloc& a : rs.allocs) {
    if (a.kind == AllocKind::kSmem) snapshot(th.rank, a);
    const bool last_reference = --x.live_refs[a.name] == 0;
    if (mosaic_) continue;
    // Interpret mode checks a barrier's invariants when its last reference goes.
    if (a.kind == AllocKind::kBarrier) {
      for (std::int64_t i = 0; i < a.num_barriers; ++i) {
        realloc_on_deallocate(th, a.name, i);
        if (!last_reference) continue;
        if (const auto v = ibarrier(th.rank, a.name, i).deallocate()) raise(*v, op.path);
        realloc_on_final_deallocate(th.rank, a.name, i, op);
      }
    }
    if (a.kind == AllocKind::kClusterBarrier) {
      for (std::int64_t i = 0; i < a.num_barriers; ++i) realloc_on_deallocate(th, a.name, i);
      if (--ref_counts_[{-1, a.name}] == 0) {
        for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
          for (std::int64_t i = 0; i < a.num_barriers; ++i) {
            if (const auto v = ibarrier(r, a.name, i).deallocate()) raise(*v, op.path);
          }
        }
        for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
          for (std::int64_t i = 0; i < a.num_barriers; ++i)
            realloc_on_final_deallocate(r, a.name, i, op);
        }
      }
    }
  }
}

void Execution::realloc_on_allocate(const Thread& th, const Op& op, const RunScoped& rs) {
  const bool allocates_barrier =
      std::any_of(rs.allocs.begin(), rs.allocs.end(), [](const Alloc& a) {
        return a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier;
      });
  if (!allocates_barrier) return;
  const auto v = realloc_.on_allocate(
      thread_repr(th.rank, th.index),
      [&](const InterpretReallocation::BarrierKey& k) -> const InterpretBarrier& {
        return ibarrier(std::get<0>(k), std::get<1>(k), std::get<2>(k));
      },
      [&](const InterpretReallocation::BarrierKey& k) {
        const Alloc& a = *allocs_.at(std::get<1>(k));
        if (a.kind == AllocKind::kClusterBarrier) return ref_counts_[{-1, a.name}] > 0;
        return cta(std::get<0>(k)).live_refs[a.name] > 0;
      });
  if (v) raise_realloc(*v, op.path);
}

void Execution::realloc_on_deallocate(const Thread& th, const std::string& name,
                                      std::int64_t index) {
  if (!realloc_checked_) return;
  realloc_.on_deallocate(thread_repr(th.rank, th.index), {th.rank, name, index},
                         ibarrier(th.rank, name, index));
}

void Execution::realloc_on_final_deallocate(std::int64_t rank, const std::string& name,
                                            std::int64_t index, const Op& op) {
  if (!realloc_checked_) return;
  if (const auto v = realloc_.on_final_deallocate({rank, name, index}, ibarrier(rank, name, index)))
    raise_realloc(*v, op.path);
}

void Execution::raise_realloc(const InterpretReallocation::Violation& v, const std::string& where) {
  ck_.check(RuleId::kRunBarrierReallocUnobserved, true, where, [&] {
    return Holes{{"thread", v.thread},
                 {"id", "0"},
                 {"last", std::to_string(v.last)},
                 {"phase", std::to_string(v.phase)}};
  });
}

void Execution::snapshot(std::int64_t rank, const Alloc& a) {
  Cta& x = cta(rank);
  BufferRecord& rec = x.buffer_records[x.buffer_record_index.at(a.name)];
  const View v = buffer(rank, a.name);
  const auto n = static_cast<std::size_t>(packed_bytes(element_count(a.shape), a.dtype));
  rec.bytes.assign(v.mem->bytes.begin() + v.offset,
                   v.mem->bytes.begin() + v.offset + static_cast<std::ptrdiff_t>(n));
  rec.undefined = v.mem->any_undef &&
                  std::any_of(v.mem->undef.begin() + v.offset,
                              v.mem->undef.begin() + v.offset + static_cast<std::ptrdiff_t>(n),
                              [](std::uint8_t u) { return u != 0; });
}

}  // namespace collfuzz::ref::exec
