// The reference's execution: stores from SMEM into an output, plain or reducing, with output
// race tracking (output_races.h).

#include "harness/core/reduction.h"
#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

void Execution::copy_out(Thread& th, const Op& op, const CopySmemToGmem& cp) {
  // gpu_callbacks.copy_smem_to_gmem: interpret mode has no predicated and no reducing store.
  ck_.check(RuleId::kInterpStorePredicate, !mosaic_ && cp.predicate.has_value(), op.path);
  ck_.check(RuleId::kInterpStoreReduction, !mosaic_ && cp.reduction_op.has_value(), op.path);
  // plgpu.commit_smem() before the store: the thread's vector stores into SMEM are fenced.
  if (cp.commit_smem) th.unfenced.clear();
  // The compiler: a false predicate stores nothing (the TMA's own predicate operand); the commit
  // and the wait of the op still run.
  if (!cp.predicate || eval_cond(*cp.predicate, mesh_, th.rank, th.index)) {
    const std::int64_t seq = th.stores.issued++;
    const std::int64_t writer = store_writer(thread_id(th), seq);
    std::vector<std::uint8_t>& written = written_.at(cp.dst);
    const std::vector<std::uint8_t> before_written = written;
    const std::vector<std::uint8_t> before = outputs_.at(cp.dst).bytes;
    std::fill(written.begin(), written.end(), kOutputUntouched);
    copy_out_elements(th, cp, before_written);
    if (mosaic_) unfenced_read(th, op, cp, written);
    DType dtype{};
    for (const auto& o : c_.outputs) {
      if (o.name == cp.dst) dtype = o.dtype;
    }
    // The elements it wrote, for a store that may stay in flight (execution_store_groups.cpp).
    std::vector<std::pair<std::int64_t, std::int64_t>> elements;
    if (mosaic_ && (!cp.wait || !cp.commit_group)) {
      for (std::size_t e = 0; e < written.size(); ++e) {
        if (written[e] == kOutputUntouched) continue;
        const auto i = static_cast<std::int64_t>(e);
        if (!elements.empty() && elements.back().second == i) {
          ++elements.back().second;
        } else {
          elements.emplace_back(i, i + 1);
        }
      }
    }
    const std::vector<std::uint8_t>& now = outputs_.at(cp.dst).bytes;
    settle_output_store(
        written, before_written, output_writers_[cp.dst], writer,
        [&](std::int64_t i) {
          return load_element(before, dtype, i) != load_element(now, dtype, i);
        },
        [&](std::int64_t prev) { return store_unordered(th, prev); });
    if (cp.commit_group) commit_stores(th);
    if (cp.wait) wait_stores(th, 0, false);
    note_store_read(th, op, cp, seq, std::move(elements));
    return;
  }
  if (cp.commit_group) commit_stores(th);
  if (cp.wait) wait_stores(th, 0, false);
}

void Execution::unfenced_read(const Thread& th, const Op& op, const CopySmemToGmem& cp,
                              std::vector<std::uint8_t>& written) {
  const Alloc* a = allocs_.at(cp.src);
  const View src = buffer(th.rank, cp.src);
  const Shape shape = smem_ref_shape(*a, cp.src_index.size(), cp.src_slice);
  const auto [lo, n] =
      byte_span(src, smem_ref_base(th, cp.src, cp.src_index, cp.src_slot, cp.src_slice),
                element_count(shape));
  const UnfencedWrite* u = unfenced_write(src.mem, lo, lo + n);
  if (!u) return;
  // The TMA store may read the bytes before or after the vector store's: none it wrote is
  // compared.
  for (std::uint8_t& w : written) {
    if (w == kOutputWritten) w = kOutputNotWritten;
  }
  if (ck_.explaining()) {
    ck_.notes.push_back("race: the store at " + op.path + " (CTA " + std::to_string(th.rank) +
                        ") reads SMEM that the vector store at " + *u->op +
                        " wrote with no commit_smem of its thread between them (the TMA reads "
                        "through the async proxy); its output elements are not compared");
  }
}

const UnfencedWrite* Execution::unfenced_write(const Memory* mem, std::size_t lo,
                                               std::size_t hi) const {
  for (const Thread& t : threads_) {
    for (const UnfencedWrite& u : t.unfenced) {
      if (u.mem == mem && u.lo < hi && lo < u.hi) return &u;
    }
  }
  return nullptr;
}

void Execution::copy_out_elements(const Thread& th, const CopySmemToGmem& cp,
                                  const std::vector<std::uint8_t>& before_written) {
  const Alloc* a = allocs_.at(cp.src);
  const View src = buffer(th.rank, cp.src);
  const ArraySpec* out = nullptr;
  for (const auto& o : c_.outputs) {
    if (o.name == cp.dst) out = &o;
  }
  const std::int64_t base = smem_ref_base(th, cp.src, cp.src_index, cp.src_slot, cp.src_slice);
  const Shape src_shape = smem_ref_shape(*a, cp.src_index.size(), cp.src_slice);
  const ResolvedSlice slice = resolve_slice(
      out->shape, cp.dst_index,
      [&](const std::string& axis) { return mesh_.axis_index(th.rank, th.index, axis); },
      iteration_);
  const Strides src_strides = row_major_rank_strides(src_shape);
  const Strides out_strides = row_major_rank_strides(out->shape);
  View dst{&outputs_.at(out->name), 0, out->dtype};
  auto& written = written_.at(out->name);
  // The output offset of the source's origin, and the output stride each source dim runs along.
  const std::size_t rank = src_shape.size();
  // A transposed source (src_transpose): the output's kept dim v is the ref's dim
  // permutation[v].
  Strides kept_strides{};
  std::int64_t d0 = 0;
  for (std::size_t i = 0, k = 0; i < out->shape.size(); ++i) {
    d0 += slice.start[i] * out_strides[i];
    if (slice.size[i] != 0 && k < rank) kept_strides[k++] = out_strides[i];
  }
  Strides along = kept_strides;
  if (cp.src_transpose) {
    for (std::size_t v = 0; v < rank; ++v)
      along[static_cast<std::size_t>(cp.src_transpose->permutation[v])] = kept_strides[v];
  }
  const int bits = dtype_bits(out->dtype);
  // A transformed buffer: logical element s lies at its physical place.
  const std::vector<std::int64_t>* place =
      a->transforms.any() && !places(*a).empty() ? &places(*a) : nullptr;
  const auto element = [&](std::int64_t s, std::int64_t d) {
    if (place) s = (*place)[static_cast<std::size_t>(s)] / (bits / 8);
    if (cp.reduction_op) {
      // cp.reduce.async.bulk: the output's element combined with the source's.
      const bool undefined =
          src.undefined(s) || before_written[static_cast<std::size_t>(d)] != kOutputWritten;
      dst.store(d, apply_reduction(*cp.reduction_op, out->dtype, dst.load(d), src.load(s)),
                undefined);
      written[static_cast<std::size_t>(d)] = !undefined;
      return;
    }
    const bool undefined = src.undefined(s);
    dst.store(d, src.load(s), undefined);
    written[static_cast<std::size_t>(d)] = !undefined;
  };
  if (rank == 0) {
    element(base, d0);
    return;
  }
  for (const std::int64_t n : src_shape) {
    if (n == 0) return;
  }
  // Rows along the last source dim, visited in row-major order.
  const std::size_t last = rank - 1;
  Strides co{};
  while (true) {
    std::int64_t s = base;
    std::int64_t d = d0;
    for (std::size_t j = 0; j < last; ++j) {
      s += co[j] * src_strides[j];
      d += co[j] * along[j];
    }
    const std::int64_t n = src_shape[last];
    const std::int64_t w = bits / 8;
    const auto row_defined = [&] {
      if (!src.mem->any_undef) return true;
      const auto first_byte = src.mem->undef.begin() + src.offset + s * w;
      return std::find(first_byte, first_byte + n * w, std::uint8_t{1}) == first_byte + n * w;
    };
    if (cp.reduction_op || place) {
      for (std::int64_t e = 0; e < n; ++e) element(s + e, d + e * along[last]);
    } else if (bits >= 8 && dtype_bits(a->dtype) == bits && along[last] == 1 && row_defined()) {
      // A row of whole bytes, every one defined: one copy.
      std::memcpy(dst.mem->bytes.data() + d * w, src.mem->bytes.data() + src.offset + s * w,
                  static_cast<std::size_t>(n * w));
      std::fill_n(dst.mem->undef.begin() + static_cast<std::ptrdiff_t>(d * w), n * w,
                  std::uint8_t{0});
      std::fill_n(written.begin() + static_cast<std::ptrdiff_t>(d), n, std::uint8_t{1});
    } else if (bits == 4 && dtype_bits(a->dtype) == 4) {  // nibbles: element(), inline
      const std::uint8_t* sb = src.mem->bytes.data() + src.offset;
      const std::uint8_t* su = src.mem->undef.data() + src.offset;
      for (std::int64_t e = 0; e < n; ++e) {
        const std::int64_t si = s + e;
        const std::int64_t di = d + e * along[last];
        const auto nib = static_cast<std::uint8_t>((sb[si / 2] >> (si % 2 ? 4 : 0)) & 0xF);
        const bool undefined = su[si / 2] != 0;
        std::uint8_t& b = dst.mem->bytes[static_cast<std::size_t>(di / 2)];
        b = (di % 2) ? static_cast<std::uint8_t>((b & 0x0F) | (nib << 4))
                     : static_cast<std::uint8_t>((b & 0xF0) | nib);
        if (undefined) {
          dst.mem->undef[static_cast<std::size_t>(di / 2)] = 1;
          dst.mem->any_undef = true;
        }
        written[static_cast<std::size_t>(di)] = !undefined;
      }
    } else {
      for (std::int64_t e = 0; e < n; ++e) element(s + e, d + e * along[last]);
    }
    std::size_t j = last;
    while (j > 0) {
      --j;
      if (++co[j] < src_shape[j]) break;
      co[j] = 0;
      if (j == 0) return;
    }
    if (last == 0) return;
  }
}

}  // namespace collfuzz::ref::exec
