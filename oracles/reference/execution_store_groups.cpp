// The reference's execution: the bulk async-groups of TMA stores (docs/case-format.md, "Store
// groups"). JAX lowers copy_smem_to_gmem to a cp.async.bulk(.tensor) store, then, with
// commit_group=True, cp.async.bulk.commit_group; plgpu.commit_smem_to_gmem_group() is the commit
// alone and plgpu.wait_smem_to_gmem(n, wait_read_only) is cp.async.bulk.wait_group(.read) n
// (launch_context.py async_copy, await_async_copy). The PTX ISA counts the groups per thread: a
// wait leaves the n most recent committed groups pending, and the stores not yet committed are in
// no group, so no wait retires them.
//
// The prediction stores the data at issue. A store then reads its SMEM until a wait retires its
// group: a write that changes those bytes before then races with it, and the store's output
// elements are not compared. Until a non-read-only wait retires it, its GMEM write is in flight:
// a later store of the same thread over the same elements is unordered with it
// (store_unordered, output_races.h). Interpret mode stores at issue time (its callback ignores
// commit_group and its waits only order its race detector's clocks), so there every store is
// retired as soon as it is issued.

#include <algorithm>

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

void Execution::commit_stores(Thread& th) {
  th.stores.group_ends.push_back(th.stores.issued);  // an empty group when nothing is uncommitted
}

void Execution::wait_stores(Thread& th, std::int64_t n, bool read_only) {
  StoreGroups& g = th.stores;
  const auto groups = static_cast<std::int64_t>(g.group_ends.size());
  const auto retired = static_cast<std::size_t>(groups > n ? groups - n : 0);
  g.read_retired = std::max(g.read_retired, retired);
  if (!read_only) g.write_retired = std::max(g.write_retired, retired);
  const std::int64_t id = thread_id(th);
  const std::int64_t done = g.read_done();
  std::erase_if(store_reads_,
                [&](const PendingStoreRead& r) { return r.thread == id && r.seq < done; });
}

void Execution::note_store_read(Thread& th, const Op& op, const CopySmemToGmem& cp,
                                std::int64_t seq,
                                std::vector<std::pair<std::int64_t, std::int64_t>> elements) {
  if (!mosaic_) {
    commit_stores(th);
    wait_stores(th, 0, false);
    return;
  }
  if (seq < th.stores.read_done()) return;
  const Alloc* a = allocs_.at(cp.src);
  const View src = buffer(th.rank, cp.src);
  const std::int64_t base = smem_ref_base(th, cp.src, cp.src_index, cp.src_slot, cp.src_slice);
  const Shape shape = smem_ref_shape(*a, cp.src_index.size(), cp.src_slice);
  const auto [at, n] = byte_span(src, base, element_count(shape));
  store_reads_.push_back(PendingStoreRead{src.mem, at, at + n, thread_id(th), seq, cp.dst,
                                          std::move(elements), &op.path, th.rank});
}

bool Execution::meets_store_read(const Memory& m, std::size_t at, std::size_t n) const {
  return std::any_of(store_reads_.begin(), store_reads_.end(), [&](const PendingStoreRead& r) {
    return r.mem == &m && r.lo < at + n && at < r.hi;
  });
}

void Execution::settle_store_reads(const Memory& m, std::size_t at, std::size_t n,
                                   const std::vector<std::uint8_t>& before,
                                   const std::vector<std::uint8_t>& undef_before) {
  std::erase_if(store_reads_, [&](const PendingStoreRead& r) {
    if (r.mem != &m || r.hi <= at || at + n <= r.lo) return false;
    bool changed = false;
    for (std::size_t b = std::max(r.lo, at); b < std::min(r.hi, at + n) && !changed; ++b) {
      changed = m.bytes[b] != before[b - at] || (m.undef[b] && !undef_before[b - at]);
    }
    if (!changed) return false;
    // The store may read the old bytes or the new: what it wrote is not predicted.
    if (ck_.explaining()) {
      std::string note =
          "race: the store at " + *r.op + " (CTA " + std::to_string(r.rank) +
          ") was still reading its SMEM source when " +
          (writing_op_ ? "the copy at " + writing_op_->path : std::string("a copy")) +
          " overwrote it; no wait_smem_to_gmem retired its group before (a read-only wait "
          "suffices). The output it wrote is not compared.";
      if (std::find(ck_.notes.begin(), ck_.notes.end(), note) == ck_.notes.end())
        ck_.notes.push_back(std::move(note));
    }
    // Every element it wrote: it may land after any later store of another thread (or one of
    // its own still in flight), whoever wrote the element last in the canonical schedule.
    std::vector<std::uint8_t>& written = written_.at(r.output);
    for (const auto& [begin, end] : r.elements) {
      for (std::int64_t e = begin; e < end; ++e) {
        auto& w = written[static_cast<std::size_t>(e)];
        if (w == kOutputWritten) w = kOutputRacy;
      }
    }
    return true;
  });
}

}  // namespace collfuzz::ref::exec
