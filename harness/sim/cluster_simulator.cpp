#include "harness/sim/cluster_simulator.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "harness/core/fill.h"

#include "harness/lowering/mutants.h"
#include "harness/sim/mbarrier.h"
#include "harness/sim/shared_memory.h"
#include "harness/sim/tma_transfer.h"
#include "harness/sim/vector_store.h"

namespace collfuzz::sim {
namespace {

using lowering::LoadOp;
using lowering::LoadPath;
using lowering::Plan;
using lowering::Step;
using lowering::StepKind;
using lowering::StoreOp;

constexpr std::int64_t kMaxMbarrierCount = (std::int64_t{1} << 20) - 1;

// What the outcome reports about one (allocation, index) in one CTA, in hardware units.
struct RecordState {
  bool created = false;
  std::int64_t arrivals = 0;
  std::int64_t armed = 0;
  std::int64_t received = 0;
  std::int64_t phases = 0;
  std::int64_t count = 0;
  std::int64_t pending = 0;
  std::int64_t tx = 0;
};

struct BufferState {
  bool created = false;
  std::vector<std::uint8_t> bytes;
  bool undefined = false;
};

struct Cta {
  SharedMemory* smem = nullptr;
  std::vector<Mbarrier> mbarriers;
  std::vector<RecordState> records;
  std::vector<std::int32_t> record_order;
  std::vector<BufferState> buffers;
  std::vector<std::int32_t> buffer_order;
  std::vector<std::int32_t> scope_live;
  // Buffers whose scope ended and whose contents have not changed since: they are read only when
  // something writes over them, or at the end of the run.
  std::vector<std::int32_t> pending_snapshots;
  std::vector<WaitRecord> waits;
  std::int64_t sync_generation = 0;
  std::int64_t sync_arrived = 0;
  std::int64_t finished_threads = 0;
};

struct Thread {
  const lowering::ThreadProgram* program = nullptr;
  std::int64_t pc = 0;
  bool blocked = false;
  bool done = false;
  std::size_t wait_record = 0;
  std::int64_t sync_generation = 0;
  // Store groups (cp.async.bulk.commit_group / wait_group, per thread): the stores issued, in
  // order (Plan::stores indices); the number issued at each commit; how many groups and stores
  // have completed. A store reads its SMEM and writes its output when it completes: at the wait
  // that retires its group, or when the thread ends (the latest the hardware may).
  std::vector<std::int32_t> stores;
  std::vector<std::size_t> group_ends;
  std::size_t groups_done = 0;
  std::size_t stores_done = 0;
  std::vector<UnfencedBytes> unfenced;  // its vector stores into SMEM since its last commit_smem
};

class Simulation {
 public:
  Simulation(const Plan& plan, DeviceMemory& memory) : plan_(plan), memory_(memory) {}

  Outcome run() {
    start();
    if (!ub_) schedule();
    // A thread left blocked (a deadlock) still has its stores in flight: the TMA completes them
    // whatever the thread does, reading SMEM as it stands at the end.
    for (Thread& th : threads_) complete_stores_upto(th, th.stores.size());
    if (ub_) {
      // Undefined behaviour: the simulator gives the run no meaning; the outcome names it.
      Outcome o;
      o.kind = OutcomeKind::kUndefined;
      o.profile = Profile::kMosaic;
      o.undefined = std::move(ub_);
      return o;
    }
    return outcome();
  }

 private:
  const Plan& plan_;
  DeviceMemory& memory_;
  std::vector<Cta> ctas_;
  ClusterSmem cluster_smem_;  // every CTA's SMEM, by rank (a cluster_ref load reads a peer's)
  std::vector<Thread> threads_;
  std::vector<GmemArray> gmem_;
  std::vector<OutputArray> outputs_;
  CarryRegisters registers_;           // the threads' loop-carried values (Plan::registers)
  std::optional<UndefinedRecord> ub_;  // the first undefined behaviour met

  void meet_undefined(UndefinedBehaviour code, std::string op, std::optional<std::int64_t> cta,
                      std::string detail) {
    if (!ub_) ub_ = UndefinedRecord{code, std::move(op), cta, std::move(detail), {}};
  }

  // ---- kernel start: SMEM, mbarrier.init, inputs, outputs --------------------------------------

  // The layout's scratch area, or more where a buffer holds more packed bytes than the layout
  // gives it (prod(shape) * bits // 8 rounds an odd int4 count down: int4[1] gets 0 bytes).
  std::int64_t arena_bytes() const {
    std::int64_t bytes = plan_.smem_scratch_bytes;
    for (const auto& b : plan_.buffers) bytes = std::max(bytes, b.smem_offset + b.bytes);
    return bytes;
  }

  void start() {
    registers_.assign(plan_.registers.size(), {});
    ctas_.resize(static_cast<std::size_t>(plan_.num_ctas));
    cluster_smem_.clear();
    for (std::size_t rank = 0; rank < ctas_.size(); ++rank) {
      Cta& cta = ctas_[rank];
      cta.smem = &memory_.smem(static_cast<std::int64_t>(rank));
      cluster_smem_.push_back(cta.smem);
      cta.smem->reset(arena_bytes());
      cta.mbarriers.resize(plan_.mbarriers.size());
      for (std::size_t i = 0; i < plan_.mbarriers.size(); ++i) {
        const std::int64_t count = plan_.mbarriers[i].arrival_count;
        if (count < 1 || count > kMaxMbarrierCount) {
          meet_undefined(UndefinedBehaviour::kMbarrierInitCount, "", std::nullopt,
                         "mbarrier.init with an arrival count of " + std::to_string(count) +
                             " (the range is 1 to 2^20 - 1)");
        }
        cta.mbarriers[i].init(count);
      }
      cta.records.resize(plan_.barrier_records.size());
      cta.buffers.resize(plan_.buffers.size());
      cta.scope_live.assign(plan_.scopes.size(), 0);
    }
    for (const ArraySpec& in : plan_.inputs) gmem_.push_back(memory_.inputs().array(in));
    for (const ArraySpec& out : plan_.outputs) {
      OutputArray o;
      o.bytes.assign(static_cast<std::size_t>(packed_bytes(element_count(out.shape), out.dtype)),
                     0);
      o.written.assign(static_cast<std::size_t>(element_count(out.shape)), 0);
      outputs_.push_back(std::move(o));
    }
    threads_.reserve(plan_.threads.size());
    for (const auto& p : plan_.threads) {
      Thread th;
      th.program = &p;
      threads_.push_back(std::move(th));
    }
  }

  // ---- records ---------------------------------------------------------------------------------

  RecordState& record(std::int64_t rank, std::int32_t id) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    RecordState& r = cta.records[static_cast<std::size_t>(id)];
    if (!r.created) {
      r.created = true;
      cta.record_order.push_back(id);
    }
    return r;
  }

  void note(std::int64_t rank, std::int32_t id) {
    RecordState& r = record(rank, id);
    const Mbarrier& m = ctas_[static_cast<std::size_t>(rank)].mbarriers[static_cast<std::size_t>(
        plan_.barrier_records[static_cast<std::size_t>(id)].mbarrier)];
    r.count = m.expected();
    r.pending = m.pending();
    r.tx = m.tx();
  }

  BufferState& open_buffer(std::int64_t rank, std::int32_t id) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    BufferState& b = cta.buffers[static_cast<std::size_t>(id)];
    if (!b.created) {
      b.created = true;
      cta.buffer_order.push_back(id);
    }
    return b;
  }

  void snapshot(std::int64_t rank, std::int32_t id) {
    BufferState& b = open_buffer(rank, id);
    const Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    const lowering::BufferInfo& info = plan_.buffers[static_cast<std::size_t>(id)];
    const std::uint8_t* first = cta.smem->data() + info.smem_offset;
    b.bytes.assign(first, first + info.bytes);
    b.undefined = cta.smem->any_undefined(info.smem_offset, info.bytes);
  }

  // ---- mbarrier events
  // ---------------------------------------------------------------------------

  void arrive(std::int64_t rank, std::int32_t mbarrier, std::int32_t id, std::int64_t count,
              std::int64_t tx) {
    Mbarrier& m =
        ctas_[static_cast<std::size_t>(rank)].mbarriers[static_cast<std::size_t>(mbarrier)];
    const bool completed = m.arrive(count, tx);
    RecordState& r = record(rank, id);
    r.arrivals += count;
    r.armed += tx;
    r.phases += completed ? 1 : 0;
    note(rank, id);
  }

  // A warp_map's entry: its warps run concurrently, so the plan's in-order run is not the only
  // one. Undefined behaviour if some order makes a copy's no-complete arrival complete a phase of
  // a barrier, from the count pending now (harness/core/no_complete_search.h).
  void check_warp_arrivals(std::int64_t rank, const lowering::WarpArrivalCheckOp& check) {
    for (const auto& b : check.barriers) {
      const Mbarrier& m =
          ctas_[static_cast<std::size_t>(rank)].mbarriers[static_cast<std::size_t>(b.mbarrier)];
      const std::optional<NoCompleteHit> hit = no_complete_completion(b.warps, m.pending());
      if (!hit) continue;
      const WarpArrival& a = b.warps[hit->warp][hit->arrival];
      meet_undefined(UndefinedBehaviour::kMbarrierNoCompleteCompletes,
                     plan_.strings[static_cast<std::size_t>(a.tag)], rank,
                     "barrier " + barrier_name(b.record) + ": warp " + std::to_string(hit->warp) +
                         "'s no-complete arrival after " + std::to_string(hit->before) + " of " +
                         std::to_string(m.pending()) + " pending hardware arrivals");
      return;
    }
  }

  // The lanes of one warpgroup arrive in lane order. While the phase has at least as many pending
  // arrivals as the lanes bring, no phase can complete before the last lane, so the lanes are one
  // update; otherwise they go one by one.
  void arrive_lanes(std::int64_t rank, const lowering::ArriveOp& a) {
    Mbarrier& m =
        ctas_[static_cast<std::size_t>(rank)].mbarriers[static_cast<std::size_t>(a.mbarrier)];
    const std::int64_t total = std::int64_t{a.lanes} * a.count_per_lane;
    const std::int64_t tx = a.tx_lane0 + (a.lanes - 1) * a.tx_other;
    std::int64_t completed = 0;
    if (m.pending() >= total) {
      completed = m.arrive(total, tx) ? 1 : 0;
    } else {
      for (std::int32_t lane = 0; lane < a.lanes; ++lane) {
        completed += m.arrive(a.count_per_lane, lane == 0 ? a.tx_lane0 : a.tx_other) ? 1 : 0;
      }
    }
    RecordState& r = record(rank, a.record);
    r.arrivals += total;
    r.armed += tx;
    r.phases += completed;
    note(rank, a.record);
  }

  void complete_tx(std::int64_t rank, std::int32_t mbarrier, std::int32_t id, std::int64_t bytes) {
    Mbarrier& m =
        ctas_[static_cast<std::size_t>(rank)].mbarriers[static_cast<std::size_t>(mbarrier)];
    const bool completed = m.complete_tx(bytes);
    RecordState& r = record(rank, id);
    r.received += bytes;
    r.phases += completed ? 1 : 0;
    note(rank, id);
  }

  // ---- data movement
  // -----------------------------------------------------------------------------

  void load(std::int64_t issuer, const LoadOp& load, const std::string& op) {
    if (!load.predicate) return;
    std::int64_t targets[16];
    int n = 0;
    if (load.multicast_mask == 0) {
      targets[n++] = issuer;
    } else {
      for (int j = 0; j < 16; ++j) {
        if (!(load.multicast_mask >> j & 1u)) continue;
        if (j >= plan_.num_ctas) {
          meet_undefined(UndefinedBehaviour::kMulticastOutsideCluster, op, issuer,
                         "a multicast to CTA " + std::to_string(j) + " of a cluster of " +
                             std::to_string(plan_.num_ctas));
          return;
        }
        if (j == issuer && lowering::mutant_active(lowering::Mutant::kMulticastSkipsSelf)) continue;
        targets[n++] = j;
      }
    }
    const std::int64_t span = packed_span(load.elem_bits, 0, load.elements);
    for (int k = 0; k < n; ++k) {
      before_write(targets[k], load.smem_offset, span);
      Cta& cta = ctas_[static_cast<std::size_t>(targets[k])];
      if (k > 0) {
        // The same bytes land at the same offset in every receiver.
        const Cta& first = ctas_[static_cast<std::size_t>(targets[0])];
        std::memcpy(cta.smem->data() + load.smem_offset, first.smem->data() + load.smem_offset,
                    static_cast<std::size_t>(span));
        cta.smem->copy_marks(*first.smem, load.smem_offset, span);
      } else if (load.path == LoadPath::kTensor) {
        write_tensor(*cta.smem, gmem_[static_cast<std::size_t>(load.input)], load);
      } else {
        write_linear(*cta.smem, gmem_[static_cast<std::size_t>(load.input)], load);
      }
      if (load.mbarrier >= 0) {
        complete_tx(load.complete_at_leader ? load.leader : targets[k], load.mbarrier, load.record,
                    load.complete_bytes);
      }
    }
  }

  // cp.async.bulk.wait_group n: every committed group of `th` but the n most recent completes.
  void complete_stores(Thread& th, std::int64_t n) {
    const auto groups = static_cast<std::int64_t>(th.group_ends.size());
    if (groups <= n) return;
    const auto upto = static_cast<std::size_t>(groups - n);
    if (upto <= th.groups_done) return;
    th.groups_done = upto;
    complete_stores_upto(th, th.group_ends[upto - 1]);
  }
  void complete_stores_upto(Thread& th, std::size_t end) {
    for (; th.stores_done < end; ++th.stores_done) {
      store(th.program->cta, plan_.stores[static_cast<std::size_t>(th.stores[th.stores_done])]);
    }
  }

  void store(std::int64_t rank, const StoreOp& s) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    OutputArray& out = outputs_[static_cast<std::size_t>(s.output)];
    const int bits = s.elem_bits;
    // The async proxy's view: without the bytes of vector stores no commit_smem fenced yet.
    std::vector<const std::vector<UnfencedBytes>*> unfenced;
    for (const Thread& t : threads_) {
      if (t.program->cta == rank && !t.unfenced.empty()) unfenced.push_back(&t.unfenced);
    }
    std::vector<std::uint8_t> scratch;
    const std::uint8_t* src =
        async_proxy_view(*cta.smem, s.smem_offset, (s.elements * bits + 7) / 8, unfenced, scratch);
    write_store(*cta.smem, src, s, plan_.outputs[static_cast<std::size_t>(s.output)].dtype, out);
  }

  // ---- scopes
  // ------------------------------------------------------------------------------------

  void enter(std::int64_t rank, std::int32_t scope) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    const lowering::ScopeInfo& s = plan_.scopes[static_cast<std::size_t>(scope)];
    std::int32_t& live = cta.scope_live[static_cast<std::size_t>(scope)];
    if (live > 0) return;  // another thread of the block allocated it
    live = s.owners;
    // Buffer records open now and are read when the scope ends (or, for a scope a deadlocked
    // thread never left, at the end of the run).
    for (std::int32_t k = 0; k < s.num_buffers; ++k) {
      open_buffer(rank, plan_.scope_buffers[static_cast<std::size_t>(s.first_buffer + k)]);
    }
    for (std::int32_t k = 0; k < s.num_records; ++k) {
      note(rank, plan_.scope_records[static_cast<std::size_t>(s.first_record + k)]);
    }
  }

  void exit(std::int64_t rank, std::int32_t scope) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    const lowering::ScopeInfo& s = plan_.scopes[static_cast<std::size_t>(scope)];
    for (std::int32_t k = 0; k < s.num_buffers; ++k) {
      defer_snapshot(cta, plan_.scope_buffers[static_cast<std::size_t>(s.first_buffer + k)]);
    }
    --cta.scope_live[static_cast<std::size_t>(scope)];
  }

  static void defer_snapshot(Cta& cta, std::int32_t id) {
    if (std::find(cta.pending_snapshots.begin(), cta.pending_snapshots.end(), id) ==
        cta.pending_snapshots.end()) {
      cta.pending_snapshots.push_back(id);
    }
  }

  // Reads every deferred snapshot that a write over [offset, offset + n) would change.
  void before_write(std::int64_t rank, std::int64_t offset, std::int64_t n) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    auto& pending = cta.pending_snapshots;
    for (std::size_t k = 0; k < pending.size();) {
      const lowering::BufferInfo& info = plan_.buffers[static_cast<std::size_t>(pending[k])];
      if (info.smem_offset < offset + n && offset < info.smem_offset + info.bytes) {
        snapshot(rank, pending[k]);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        ++k;
      }
    }
  }

  // The end of the run: every deferred snapshot is read; the one at offset 0 takes the SMEM bytes
  // themselves instead of a copy.
  void read_deferred_snapshots(std::int64_t rank) {
    Cta& cta = ctas_[static_cast<std::size_t>(rank)];
    std::int32_t at_zero = -1;
    for (std::int32_t id : cta.pending_snapshots) {
      const lowering::BufferInfo& info = plan_.buffers[static_cast<std::size_t>(id)];
      if (info.smem_offset != 0) continue;
      if (at_zero < 0 || info.bytes > plan_.buffers[static_cast<std::size_t>(at_zero)].bytes)
        at_zero = id;
    }
    for (std::int32_t id : cta.pending_snapshots) {
      if (id != at_zero) snapshot(rank, id);
    }
    if (at_zero >= 0) {
      BufferState& b = open_buffer(rank, at_zero);
      const std::int64_t bytes = plan_.buffers[static_cast<std::size_t>(at_zero)].bytes;
      b.undefined = cta.smem->any_undefined(0, bytes);
      b.bytes = cta.smem->release();
      b.bytes.resize(static_cast<std::size_t>(bytes));
    }
    cta.pending_snapshots.clear();
  }

  // ---- the schedule
  // ------------------------------------------------------------------------------

  void release_block_sync(Cta& cta) {
    if (cta.sync_arrived > 0 && cta.sync_arrived + cta.finished_threads == plan_.threads_per_cta) {
      ++cta.sync_generation;
      cta.sync_arrived = 0;
    }
  }

  std::string path(const Step& s) const {
    return s.op >= 0 ? plan_.strings[static_cast<std::size_t>(s.op)] : "";
  }

  const std::string& barrier_name(std::int32_t record) {
    if (record_names_.empty()) {
      for (const auto& r : plan_.barrier_records) {
        record_names_.push_back(plan_.strings[static_cast<std::size_t>(r.alloc)] + "[" +
                                std::to_string(r.index) + "]");
      }
    }
    return record_names_[static_cast<std::size_t>(record)];
  }
  std::vector<std::string> record_names_;  // "alloc[index]" per barrier record

  // Runs `th` until it blocks or finishes; returns whether it made progress.
  bool advance(Thread& th) {
    const lowering::ThreadProgram& p = *th.program;
    Cta& cta = ctas_[static_cast<std::size_t>(p.cta)];
    bool progressed = false;
    while (th.pc < p.num_steps && !ub_) {
      const Step& s = plan_.steps[static_cast<std::size_t>(p.first_step + th.pc)];
      const auto idx = static_cast<std::size_t>(s.index);
      switch (s.kind) {
        case StepKind::kScopeEnter:
          enter(p.cta, s.index);
          break;
        case StepKind::kScopeExit:
          exit(p.cta, s.index);
          break;
        case StepKind::kBlockSync: {
          const lowering::BlockSyncOp& b = plan_.block_syncs[idx];
          // The kernel's own entry sync precedes every step of every thread, so it orders
          // nothing; scheduling it would only rotate the canonical visit order.
          if (!b.recorded) break;
          if (!th.blocked) {
            cta.waits.push_back(WaitRecord{p.thread, path(s), "block_sync", b.phase, false});
            th.wait_record = cta.waits.size() - 1;
            th.sync_generation = cta.sync_generation;
            ++cta.sync_arrived;
            release_block_sync(cta);
          }
          if (cta.sync_generation == th.sync_generation) {
            th.blocked = true;
            return progressed;
          }
          cta.waits[th.wait_record].completed = true;
          break;
        }
        case StepKind::kWait: {
          const lowering::WaitOp& w = plan_.waits[idx];
          if (!th.blocked) {
            cta.waits.push_back(
                WaitRecord{p.thread, path(s), barrier_name(w.record), w.phase, false});
            th.wait_record = cta.waits.size() - 1;
          }
          if (!cta.mbarriers[static_cast<std::size_t>(w.mbarrier)].parity_wait_passes(w.phase)) {
            th.blocked = true;
            return progressed;
          }
          cta.waits[th.wait_record].completed = true;
          break;
        }
        case StepKind::kArrive:
          arrive_lanes(p.cta, plan_.arrives[idx]);
          break;
        case StepKind::kRemoteArrive: {
          const lowering::RemoteArriveOp& a = plan_.remote_arrives[idx];
          for (std::int64_t j = 0; j < 16; ++j) {
            if (!(a.mask >> j & 1u)) continue;
            if (j >= plan_.num_ctas) {
              meet_undefined(UndefinedBehaviour::kClusterArrivalOutsideCluster, path(s), p.cta,
                             "a cluster-barrier arrival on CTA " + std::to_string(j) +
                                 " of a cluster of " + std::to_string(plan_.num_ctas));
              break;
            }
            arrive(j, a.mbarrier, a.record, 1, 0);
          }
          break;
        }
        case StepKind::kClusterCancel: {
          // clusterlaunchcontrol.try_cancel .multicast::cluster::all: the response in every
          // CTA, its bytes the scheduler's (undefined), each CTA's mbarrier completing 16 bytes.
          const lowering::ClusterCancelOp& cc = plan_.cluster_cancels[idx];
          for (std::int64_t j = 0; j < plan_.num_ctas; ++j) {
            ctas_[static_cast<std::size_t>(j)].smem->mark(cc.result_offset,
                                                          lowering::kResponseBytes, true);
            complete_tx(j, cc.mbarrier, cc.record, lowering::kResponseBytes);
          }
          break;
        }
        case StepKind::kCompleteTx: {
          const lowering::CompleteTxOp& ct = plan_.complete_txs[idx];
          complete_tx(p.cta, ct.mbarrier, ct.record, ct.bytes);
          break;
        }
        case StepKind::kLoad:
          load(p.cta, plan_.loads[idx], path(s));
          break;
        case StepKind::kStore: {
          const StoreOp& st = plan_.stores[idx];
          if (st.commit_smem) th.unfenced.clear();
          th.stores.push_back(s.index);
          if (st.commit) th.group_ends.push_back(th.stores.size());
          if (st.wait) complete_stores(th, 0);
          break;
        }
        case StepKind::kVectorStore: {
          const lowering::VectorStoreOp& v = plan_.vector_stores[idx];
          if (v.to_register >= 0) {
            run_vector_store_register(plan_, v, *cta.smem, cluster_smem_, gmem_, registers_);
          } else if (v.to_smem) {
            // A DSMEM write lands in the peer's SMEM (VectorStoreOp::smem_rank).
            const std::int64_t to = v.smem_rank < 0 ? p.cta : v.smem_rank;
            before_write(to, v.smem_offset, v.elements * dtype_bits(v.dtype) / 8);
            run_vector_store_smem(plan_, v, *cta.smem, *ctas_[static_cast<std::size_t>(to)].smem,
                                  cluster_smem_, gmem_, registers_, th.unfenced);
          } else {
            // Only a store into an output names one (into SMEM, v.output is not an index).
            OutputArray& out = outputs_[static_cast<std::size_t>(v.output)];
            run_vector_store(plan_, v, *cta.smem, cluster_smem_, gmem_, registers_, out.bytes,
                             out.written);
          }
          break;
        }
        case StepKind::kWarpArrivalCheck:
          check_warp_arrivals(p.cta, plan_.warp_checks[idx]);
          break;
        case StepKind::kCommitSmem:
          th.unfenced.clear();  // fence.proxy.async.shared::cta
          break;
        case StepKind::kStoreCommit:
          th.group_ends.push_back(th.stores.size());
          break;
        case StepKind::kStoreWait:
          complete_stores(th, plan_.store_waits[idx].n);  // read_only: the same, done sooner
          break;
      }
      th.blocked = false;
      ++th.pc;
      progressed = true;
    }
    if (th.pc >= p.num_steps && !th.done) {
      complete_stores_upto(th, th.stores.size());
      th.done = true;
      ++cta.finished_threads;
      release_block_sync(cta);
      progressed = true;
    }
    return progressed;
  }

  void schedule() {
    bool progress = true;
    while (progress && !ub_) {
      progress = false;
      for (Thread& th : threads_) progress = advance(th) || progress;
    }
  }

  // ---- the outcome
  // -------------------------------------------------------------------------------

  Outcome outcome() {
    Outcome o;
    o.profile = Profile::kMosaic;
    bool deadlock = false;
    for (const Thread& th : threads_) deadlock = deadlock || !th.done;
    o.kind = deadlock ? OutcomeKind::kDeadlock : OutcomeKind::kCompleted;
    for (std::int64_t rank = 0; rank < plan_.num_ctas; ++rank) {
      Cta& cta = ctas_[static_cast<std::size_t>(rank)];
      // Allocations a deadlocked thread never left: their contents now.
      for (std::size_t s = 0; s < plan_.scopes.size(); ++s) {
        if (cta.scope_live[s] <= 0) continue;
        const lowering::ScopeInfo& info = plan_.scopes[s];
        for (std::int32_t k = 0; k < info.num_buffers; ++k) {
          defer_snapshot(cta, plan_.scope_buffers[static_cast<std::size_t>(info.first_buffer + k)]);
        }
      }
      read_deferred_snapshots(rank);
      CtaRecord rec;
      rec.rank = rank;
      rec.coords = plan_.cta_coords[static_cast<std::size_t>(rank)];
      for (std::int32_t id : cta.record_order) {
        const RecordState& r = cta.records[static_cast<std::size_t>(id)];
        const lowering::BarrierRecordInfo& info =
            plan_.barrier_records[static_cast<std::size_t>(id)];
        BarrierRecord br;
        br.alloc = plan_.strings[static_cast<std::size_t>(info.alloc)];
        br.index = info.index;
        br.count = r.count / info.unit;
        br.arrivals = r.arrivals / info.unit;
        br.armed = r.armed;
        br.received = r.received;
        br.phases = r.phases;
        br.pending = r.pending >= 0 ? (r.pending + info.unit - 1) / info.unit
                                    : -((-r.pending + info.unit - 1) / info.unit);
        br.tx = r.tx;
        rec.barriers.push_back(std::move(br));
      }
      for (std::int32_t id : cta.buffer_order) {
        BufferState& b = cta.buffers[static_cast<std::size_t>(id)];
        rec.buffers.push_back(BufferRecord{plan_.strings[static_cast<std::size_t>(
                                               plan_.buffers[static_cast<std::size_t>(id)].alloc)],
                                           std::move(b.bytes), b.undefined, true});
      }
      rec.waits = std::move(cta.waits);
      std::stable_sort(
          rec.waits.begin(), rec.waits.end(),
          [](const WaitRecord& a, const WaitRecord& b) { return a.thread < b.thread; });
      o.ctas.push_back(std::move(rec));
    }
    for (std::size_t i = 0; i < plan_.outputs.size(); ++i) {
      OutputRecord r;
      r.name = plan_.outputs[i].name;
      const auto& w = outputs_[i].written;
      for (std::size_t e = 0; e < w.size();) {
        if (!w[e]) {
          ++e;
          continue;
        }
        const std::size_t b = e;
        while (e < w.size() && w[e]) ++e;
        r.written.emplace_back(static_cast<std::int64_t>(b), static_cast<std::int64_t>(e));
      }
      r.bytes = std::move(outputs_[i].bytes);
      o.outputs.push_back(std::move(r));
    }
    return o;
  }
};

}  // namespace

Outcome simulate_plan(const lowering::Plan& plan, DeviceMemory& memory) {
  return Simulation(plan, memory).run();
}

}  // namespace collfuzz::sim
