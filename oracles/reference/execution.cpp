// The reference's execution (execution.h): every Pallas thread of every CTA runs its steps under
// the canonical schedule; the outcome is read off the final state. The constructs' steps are in
// execution_layout.cpp, execution_scopes.cpp, execution_copies.cpp, execution_stores.cpp and
// execution_barriers.cpp.

#include "oracles/reference/execution.h"

#include <random>

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

bool eval_cond(const Cond& c, const MeshFacts& mesh, std::int64_t rank, std::int64_t thread) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      return c.constant;
    case Cond::Kind::kAtom: {
      const std::int64_t v = mesh.axis_index(rank, thread, c.axis);
      switch (c.op) {
        case CmpOp::kEq:
          return v == c.value;
        case CmpOp::kNe:
          return v != c.value;
        case CmpOp::kLt:
          return v < c.value;
        case CmpOp::kLe:
          return v <= c.value;
        case CmpOp::kGt:
          return v > c.value;
        case CmpOp::kGe:
          return v >= c.value;
      }
      return false;
    }
    case Cond::Kind::kAll:
      return std::all_of(c.children.begin(), c.children.end(),
                         [&](const Cond& ch) { return eval_cond(ch, mesh, rank, thread); });
    case Cond::Kind::kAny:
      return std::any_of(c.children.begin(), c.children.end(),
                         [&](const Cond& ch) { return eval_cond(ch, mesh, rank, thread); });
    case Cond::Kind::kNot:
      return !eval_cond(c.children.front(), mesh, rank, thread);
  }
  return false;
}

Outcome Execution::run(std::vector<std::size_t>* thread_steps) {
  layout();
  const std::int64_t nctas = mesh_.num_ctas();
  ctas_.resize(static_cast<std::size_t>(nctas));
  for (auto& cta : ctas_) {
    if (mosaic_) {
      cta.smem.reset(static_cast<std::size_t>(smem_size_));
      cta.slots.resize(static_cast<std::size_t>(slot_base_total_));
      for (const auto& [name, slot] : slot_of_) {
        const Alloc* a = allocs_.at(name);
        check_mbarrier_count(mbarrier_init_count(*a, barrier_count(*a)), name);
        for (std::int64_t i = 0; i < a->num_barriers; ++i) {
          cta.slots[static_cast<std::size_t>(slot_base_[static_cast<std::size_t>(slot)] + i)].init(
              barrier_count(*a));
        }
      }
    }
  }
  for (const auto& out : c_.outputs) {
    Memory m;
    m.reset(static_cast<std::size_t>(packed_bytes(element_count(out.shape), out.dtype)));
    std::fill(m.bytes.begin(), m.bytes.end(), std::uint8_t{0});
    outputs_[out.name] = std::move(m);
    written_[out.name].assign(static_cast<std::size_t>(element_count(out.shape)), 0);
  }
  for (std::int64_t r = 0; r < nctas; ++r) {
    for (std::int64_t t = 0; t < mesh_.num_threads(); ++t) {
      Thread th;
      th.rank = r;
      th.index = t;
      build_steps(c_.program, th, 0);
      threads_.push_back(std::move(th));
    }
  }
  if (thread_steps) {
    for (const Thread& th : threads_) {
      if (!schedule_.only_rank || th.rank == *schedule_.only_rank)
        thread_steps->push_back(th.steps.size());
    }
  }
  schedule();
  return outcome();
}

bool Execution::advance(Thread& th, std::size_t stop) {
  bool progressed = false;
  bool first_try = !blocked_.count(&th);
  while (!th.finished() && th.pc < stop) {
    const Step& st = th.steps[th.pc];
    iteration_ = st.iteration;
    switch (st.kind) {
      case Step::Kind::kBlockSync:
        if (!block_sync(th, *st.op, first_try)) {
          blocked_.insert(&th);
          return progressed;
        }
        th.at_sync = false;
        ++th.syncs_reached;
        break;
      case Step::Kind::kWait:
        if (!barrier_wait(th, *st.op, std::get<BarrierWait>(st.op->v).barrier, first_try)) {
          blocked_.insert(&th);
          return progressed;
        }
        break;
      case Step::Kind::kEnter:
        enter(th, *st.op, std::get<RunScoped>(st.op->v));
        break;
      case Step::Kind::kExit:
        leave(th, *st.op, std::get<RunScoped>(st.op->v));
        break;
      case Step::Kind::kCopy: {
        const CopyFacts& f = copies_.at(st.op);
        if (!mosaic_) {
          copy_interpret(th, f);
        } else if (ck_.arch_major() < 9) {
          copy_cp_async(th, f);
        } else {
          copy_tma(th, f);
        }
        break;
      }
      case Step::Kind::kCopyOut:
        copy_out(th, *st.op, std::get<CopySmemToGmem>(st.op->v));
        break;
      case Step::Kind::kArrive:
        barrier_arrive(th, *st.op, *arrival_barrier(*st.op));
        break;
      case Step::Kind::kVectorStore:
        vector_store(th, *st.op, std::get<VectorStore>(st.op->v));
        break;
      case Step::Kind::kClusterCancel:
        try_cluster_cancel(th, *st.op, std::get<TryClusterCancel>(st.op->v));
        break;
      case Step::Kind::kCommitSmem:
        th.unfenced.clear();  // fence.proxy.async.shared::cta
        break;
      case Step::Kind::kStoreCommit:
        commit_stores(th);
        break;
      case Step::Kind::kWarpMapBegin:
        check_warp_arrivals(th);
        break;
      case Step::Kind::kWarpMapEnd:
        break;
      case Step::Kind::kCarryInit:
      case Step::Kind::kCarryNext:
        carry(th, *std::get<Loop>(st.op->v).carry, st.kind == Step::Kind::kCarryNext, st.op->path);
        break;
      case Step::Kind::kStoreWait: {
        const auto& w = std::get<WaitSmemToGmem>(st.op->v);
        wait_stores(th, w.n, w.read_only);
        break;
      }
    }
    blocked_.erase(&th);
    first_try = true;
    ++th.pc;
    progressed = true;
  }
  return progressed;
}

void Execution::schedule() {
  std::vector<Thread*> order;
  for (Thread& th : threads_) {
    if (!schedule_.only_rank || th.rank == *schedule_.only_rank) order.push_back(&th);
  }
  if (order.empty()) return;
  // The preempted thread is named by its position before the rotation.
  Thread* preempted = schedule_.preempt && schedule_.preempt->first < order.size()
                          ? order[schedule_.preempt->first]
                          : nullptr;
  std::rotate(order.begin(),
              order.begin() + static_cast<std::ptrdiff_t>(schedule_.rotate % order.size()),
              order.end());
  if (schedule_.random_seed) {
    schedule_randomly(order, *schedule_.random_seed);
    return;
  }
  bool progress = true;
  while (progress) {
    progress = false;
    for (Thread* th : order) {
      if (th == preempted) {
        const std::size_t stop = schedule_.preempt->second;
        const bool moved = advance(*th, stop);
        progress = progress || moved;
        if (th->pc >= stop) preempted = nullptr;  // the preemption happened: run freely after
        continue;
      }
      progress = advance(*th) || progress;
    }
  }
}

void Execution::schedule_randomly(const std::vector<Thread*>& order, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Thread*> movable = order;
  for (;;) {
    std::erase_if(movable, [](const Thread* th) { return th->finished(); });
    std::shuffle(movable.begin(), movable.end(), rng);
    // One step of the first thread (in this turn's random order) that can take one.
    const auto moved = std::find_if(movable.begin(), movable.end(),
                                    [&](Thread* th) { return advance(*th, th->pc + 1); });
    if (moved == movable.end()) return;
  }
}

Outcome Execution::outcome() {
  Outcome o;
  o.profile = ck_.profile;
  o.executor = "reference";
  bool deadlock = false;
  for (const Thread& th : threads_) deadlock = deadlock || !th.finished();
  o.kind = deadlock ? OutcomeKind::kDeadlock : OutcomeKind::kCompleted;
  for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
    Cta& x = cta(r);
    // Allocations still live (a deadlocked thread never left their scope): their contents now.
    for (const auto& [name, refs] : x.live_refs) {
      if (refs > 0 && x.buffer_record_index.count(name)) snapshot(r, *allocs_.at(name));
    }
    CtaRecord rec;
    rec.rank = r;
    rec.coords = mesh_.coords(r);
    for (const BarrierKeyRecord& b : x.barrier_records) {
      BarrierRecord br;
      br.alloc = b.alloc;
      br.index = b.index;
      br.count = b.count;
      br.arrivals = b.counters.arrivals;
      br.phases = b.counters.phases;
      br.pending = b.pending;
      if (mosaic_) {
        br.armed = b.counters.armed;
        br.received = b.counters.received;
        br.tx = b.tx;
      }
      rec.barriers.push_back(br);
    }
    rec.buffers = x.buffer_records;
    rec.waits = x.waits;
    std::stable_sort(rec.waits.begin(), rec.waits.end(),
                     [](const WaitRecord& a, const WaitRecord& b) { return a.thread < b.thread; });
    o.ctas.push_back(std::move(rec));
  }
  for (const auto& out : c_.outputs) {
    OutputRecord r;
    r.name = out.name;
    r.bytes = outputs_.at(out.name).bytes;
    const auto& w = written_.at(out.name);
    for (std::size_t e = 0; e < w.size();) {
      if (w[e] != kOutputWritten) {
        ++e;
        continue;
      }
      const std::size_t b = e;
      while (e < w.size() && w[e] == kOutputWritten) ++e;
      r.written.emplace_back(static_cast<std::int64_t>(b), static_cast<std::int64_t>(e));
    }
    o.outputs.push_back(std::move(r));
  }
  return o;
}

}  // namespace collfuzz::ref::exec

namespace collfuzz::ref {

Outcome execute(Checker& ck, const Schedule& schedule, std::vector<std::size_t>* thread_steps) {
  return exec::Execution(ck, schedule).run(thread_steps);
}

}  // namespace collfuzz::ref
