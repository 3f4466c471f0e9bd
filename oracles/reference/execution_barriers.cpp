// The reference's execution: barriers. Arrivals, expect_tx arming, TMA completions, waits,
// block syncs, and interpret mode's barrier run-time errors.

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

void Execution::raise(const InterpretBarrier::Violation& v, const std::string& where) {
  using K = InterpretBarrier::Violation::Kind;
  const auto n = [](std::int64_t x) { return std::to_string(x); };
  switch (v.kind) {
    case K::kPhase0Unobserved:
      ck_.check(RuleId::kRunBarrierPhase0Unobserved, true, where);
      break;
    case K::kMissedPhase:
      ck_.check(RuleId::kRunBarrierMissedPhase, true, where, [&] {
        return Holes{{"thread", v.thread},
                     {"last", n(v.last)},
                     {"phase", n(v.phase)},
                     {"missed", n(v.extra)}};
      });
      break;
    case K::kFirstWaitLate:
      ck_.check(RuleId::kRunBarrierFirstWaitLate, true, where, [&] {
        return Holes{{"thread", v.thread}, {"id", "0"}, {"phase", n(v.phase)}};
      });
      break;
    case K::kWaitLate:
      ck_.check(RuleId::kRunBarrierWaitLate, true, where, [&] {
        return Holes{{"thread", v.thread}, {"next", n(v.extra)}, {"phase", n(v.phase)}};
      });
      break;
    case K::kDeallocPending:
      ck_.check(RuleId::kRunBarrierDeallocPending, true, where, [&] {
        return Holes{{"n", n(v.extra)}};
      });
      break;
    case K::kDeallocUnobserved:
      ck_.check(RuleId::kRunBarrierDeallocUnobserved, true, where, [&] {
        return Holes{{"id", "0"}, {"thread", v.thread}, {"last", n(v.last)}, {"phase", n(v.phase)}};
      });
      break;
  }
}

std::string Execution::barrier_identity(const std::string& name, std::int64_t index) const {
  // Each thread keeps one parity bit per mbarrier: per pool slot under the compiler, per
  // allocation in interpret mode.
  if (mosaic_)
    return "slot" + std::to_string(slot_of_.at(name)) + "[" + std::to_string(index) + "]";
  return name + "[" + std::to_string(index) + "]";
}

BarrierKeyRecord& Execution::record(std::int64_t rank, const std::string& name,
                                    std::int64_t index) {
  Cta& x = cta(rank);
  const auto key = std::make_pair(name, index);
  auto it = x.barrier_record_index.find(key);
  if (it == x.barrier_record_index.end()) {
    it = x.barrier_record_index.emplace(key, x.barrier_records.size()).first;
    BarrierKeyRecord r;
    r.alloc = name;
    r.index = index;
    x.barrier_records.push_back(r);
  }
  return x.barrier_records[it->second];
}

void Execution::note_state(BarrierKeyRecord& r, const BarrierModel& b) {
  r.count = b.count();
  r.pending = b.pending();
  r.tx = b.tx();
}

void Execution::note_state(std::int64_t rank, const std::string& name, std::int64_t index) {
  BarrierKeyRecord& r = record(rank, name, index);
  if (mosaic_) {
    note_state(r, barrier(rank, name, index));
  } else {
    const InterpretBarrier& b = ibarrier(rank, name, index);
    r.count = b.num_arrivals();
    r.pending = b.num_arrivals() - b.arrivals_count();
  }
}

void Execution::arrive(std::int64_t rank, const std::string& name, std::int64_t index,
                       std::int64_t arrivals, std::int64_t bytes, const std::string& where) {
  BarrierKeyRecord& r = record(rank, name, index);
  r.counters.arrivals += arrivals;
  r.counters.armed += bytes;
  if (mosaic_) {
    BarrierModel& b = barrier(rank, name, index);
    r.counters.phases += b.arrive(arrivals, bytes);
    note_state(r, b);
    return;
  }
  for (std::int64_t k = 0; k < arrivals; ++k) {
    bool completed = false;
    const auto violation = ibarrier(rank, name, index).arrive(completed);
    r.counters.phases += completed ? 1 : 0;
    if (violation) raise(*violation, where);
  }
  note_state(rank, name, index);
}

void Execution::arm(std::int64_t rank, const CopyFacts& f, std::int64_t bytes, bool pred) {
  const CopyGmemToSmem& cp = *f.copy;
  const std::string& name = cp.barrier->alloc;
  const std::int64_t index = barrier_index_at(*cp.barrier, iteration_);
  // 0.12.0.1 guards the arrive.expect_tx with the predicate (rules.md, "JAX versions"): a
  // predicated-off copy does not arrive, and the byte count is a constant.
  const bool gated = at_least(c_.target.jax, JaxVersion::k0_12_0_1);
  if (gated && !pred) return;
  const std::int64_t total = pred ? bytes : 0;
  // 0.12.0.1 arms an orders_tensor_core barrier from one lane with the whole byte count.
  if (f.barrier->orders_tensor_core && mosaic_ && gated) {
    arrive(rank, name, index, 1, total, f.op->path);
    return;
  }
  if (!f.barrier->orders_tensor_core || !mosaic_ || barrier(rank, name, index).pending() >= 128) {
    arrive(rank, name, index, f.barrier->orders_tensor_core ? 128 : 1, total, f.op->path);
    return;
  }
  // The lanes' shares: Lane semantics spread bytes/128 over every lane; Warpgroup semantics
  // spread a constant byte count divisible by 128, and give anything else to lane 0.
  std::int64_t lane0 = total / 128;
  std::int64_t other = total / 128;
  if (c_.target.semantics == Semantics::kWarpgroup) {
    const std::optional<bool> folded =
        cp.predicate && !gated ? python_bool(*cp.predicate) : std::optional<bool>(true);
    if (!folded || total % 128 != 0) {
      lane0 = total;
      other = 0;
    }
  }
  BarrierKeyRecord& r = record(rank, name, index);
  r.counters.arrivals += 128;
  r.counters.armed += lane0 + 127 * other;
  for (int lane = 0; lane < 128; ++lane) {
    r.counters.phases += barrier(rank, name, index).arrive(1, lane == 0 ? lane0 : other);
  }
  note_state(rank, name, index);
}

void Execution::complete_tx(std::int64_t rank, const std::string& name, std::int64_t index,
                            std::int64_t bytes) {
  BarrierKeyRecord& r = record(rank, name, index);
  BarrierModel& b = barrier(rank, name, index);  // TMA completions: the compiler's barriers
  r.counters.received += bytes;
  r.counters.phases += b.complete_tx(bytes);
  note_state(r, b);
}

void Execution::barrier_arrive(const Thread& th, const Op& op, const BarrierUse& use) {
  const Alloc* a = allocs_.at(use.alloc);
  const std::int64_t idx = barrier_index_at(use, iteration_);
  if (a->kind == AllocKind::kBarrier) {
    arrive(th.rank, use.alloc, idx, 1, 0, op.path);
    return;
  }
  // ClusterBarrier: one arrival on the same barrier of every CTA in the mask.
  std::set<std::int64_t> targets;
  if (!mosaic_) {
    // Interpret mode: itself, and every block that differs in exactly one collective axis.
    targets.insert(th.rank);
    for (std::size_t k : interpret_collective_cluster_axes(*a)) {
      for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
        bool differs_only_in_k = true;
        for (std::size_t j = 0; j < c_.mesh.cluster.size(); ++j) {
          if (j != k && mesh_.coords(r)[j] != mesh_.coords(th.rank)[j]) differs_only_in_k = false;
        }
        if (differs_only_in_k) targets.insert(r);
      }
    }
  } else {
    std::vector<std::vector<int>> entries;
    std::vector<std::int64_t> sizes;
    for (const AxisName& e : a->collective_axes) {
      std::vector<int> dims;
      for (const auto& part : e.parts) dims.push_back(*mesh_.cluster_dim(AxisName::plain(part)));
      std::int64_t size = 1;
      for (int d : dims) size *= mesh_.cuda_cluster()[static_cast<std::size_t>(d)];
      entries.push_back(dims);
      sizes.push_back(size);
    }
    for (std::size_t k = 0; k < entries.size(); ++k) {
      if (sizes[k] == 1) continue;
      if (a->leader_tracked) {
        for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
          if (same_group(mesh_, entries[k], r, th.rank) && group_index(mesh_, entries[k], r) == 0)
            targets.insert(r);
        }
        continue;
      }
      const auto reached = multicast_targets(mesh_, entries[k], th.rank);
      check_cluster_arrival_in_cluster(reached, mesh_.num_ctas(), op.path, th.rank);
      targets.insert(reached.begin(), reached.end());
    }
    if (targets.empty()) targets.insert(th.rank);
  }
  for (std::int64_t r : targets) arrive(r, use.alloc, idx, 1, 0, op.path);
}

bool Execution::barrier_wait(Thread& th, const Op& op, const BarrierUse& use, bool first_try) {
  const std::int64_t idx = barrier_index_at(use, iteration_);
  Cta& x = cta(th.rank);
  bool passes = false;
  std::int64_t phase = 0;
  const std::string id = barrier_identity(use.alloc, idx);
  if (mosaic_) {
    phase = th.waits_on[id];
    passes = barrier(th.rank, use.alloc, idx).parity_wait_passes(phase % 2);
  } else {
    const auto violation =
        ibarrier(th.rank, use.alloc, idx)
            .wait(thread_repr(th.rank, th.index), passes, phase, /*resumed=*/!first_try);
    if (violation) raise(*violation, op.path);
  }
  if (first_try) {
    x.waits.push_back(
        WaitRecord{th.index, op.path, use.alloc + "[" + std::to_string(idx) + "]", phase, false});
    th_wait_record_[&th] = x.waits.size() - 1;
  }
  if (passes) {
    x.waits[th_wait_record_[&th]].completed = true;
    th.waits_on[id] = phase + 1;
  }
  return passes;
}

bool Execution::block_sync(Thread& th, const Op& op, bool first_try) {
  Cta& x = cta(th.rank);
  const std::int64_t s = th.syncs_reached;
  if (first_try) {
    th.at_sync = true;
    x.waits.push_back(WaitRecord{th.index, op.path, "block_sync", s, false});
    th_wait_record_[&th] = x.waits.size() - 1;
  }
  for (const Thread& u : threads_) {
    if (u.rank != th.rank || &u == &th) continue;
    const bool reached = u.syncs_reached > s || (u.syncs_reached == s && u.at_sync) || u.finished();
    if (!reached) return false;
  }
  x.waits[th_wait_record_[&th]].completed = true;
  return true;
}

}  // namespace collfuzz::ref::exec
