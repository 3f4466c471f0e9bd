#include "oracles/reference/execution.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "harness/core/fill.h"
#include "harness/core/limits.h"
#include "harness/core/mutants.h"
#include "harness/core/ndarray.h"
#include "oracles/reference/barrier_model.h"
#include "oracles/reference/copy_facts.h"
#include "oracles/reference/interpret_barrier.h"
#include "oracles/reference/interpret_reallocation.h"
#include "oracles/reference/output_races.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/smem_races.h"
#include "oracles/reference/undefined_runs.h"

namespace collfuzz::ref {
namespace {

constexpr std::int64_t kSmemAlignment = 1024;

std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

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

// ----------------------------------------------------------------------------------------------
// Memory: a byte array with a per-byte "undefined" mark; a buffer is a view at a byte offset.

struct Memory {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> undef;
  bool any_undef = false;  // whether any byte was ever marked undefined
  // SMEM only, who wrote which bytes (smem_races.h): while few, the byte ranges each write
  // wrote; past that (or once two writers' ranges meet), each byte's writer.
  std::vector<SmemSpan> spans;
  std::vector<std::uint16_t> writers;
  void reset(std::size_t n) {
    bytes.assign(n, kSmemSentinel);
    undef.assign(n, 0);
    any_undef = false;
    spans.clear();
    writers.clear();
  }
};

struct View {
  Memory* mem = nullptr;
  std::int64_t offset = 0;  // bytes
  DType dtype = DType::kFloat32;

  void store(std::int64_t e, std::uint64_t bits, bool undefined) {
    const int w = dtype_bits(dtype);
    if (w == 4) {
      const auto byte = static_cast<std::size_t>(offset + e / 2);
      std::uint8_t& b = mem->bytes[byte];
      b = (e % 2) ? static_cast<std::uint8_t>((b & 0x0F) | ((bits & 0xF) << 4))
                  : static_cast<std::uint8_t>((b & 0xF0) | (bits & 0xF));
      mem->undef[byte] = undefined ? 1 : mem->undef[byte];
      mem->any_undef = mem->any_undef || undefined;
      return;
    }
    const auto n = static_cast<std::size_t>(w / 8);
    const auto at = static_cast<std::size_t>(offset + e * (w / 8));
    std::memcpy(mem->bytes.data() + at, &bits, n);
    std::fill_n(mem->undef.begin() + static_cast<std::ptrdiff_t>(at), n, undefined ? 1 : 0);
    mem->any_undef = mem->any_undef || undefined;
  }
  std::uint64_t load(std::int64_t e) const {
    const int w = dtype_bits(dtype);
    if (w == 4) {
      const std::uint8_t b = mem->bytes[static_cast<std::size_t>(offset + e / 2)];
      return (e % 2) ? (b >> 4) : (b & 0xF);
    }
    std::uint64_t v = 0;
    std::memcpy(&v, mem->bytes.data() + offset + e * (w / 8), static_cast<std::size_t>(w / 8));
    return v;
  }
  bool undefined(std::int64_t e) const {
    const int w = dtype_bits(dtype);
    const std::int64_t first = w == 4 ? offset + e / 2 : offset + e * (w / 8);
    const std::int64_t n = w == 4 ? 1 : w / 8;
    for (std::int64_t i = 0; i < n; ++i) {
      if (mem->undef[static_cast<std::size_t>(first + i)]) return true;
    }
    return false;
  }
};

// ----------------------------------------------------------------------------------------------

struct Step {
  enum class Kind : std::uint8_t { kEnter, kExit, kBlockSync, kCopy, kCopyOut, kArrive, kWait };
  Kind kind;
  const Op* op;
};

struct BarrierKeyRecord {
  std::string alloc;
  std::int64_t index;
  BarrierCounters counters;
  std::int64_t count = 0;
  std::int64_t pending = 0;
  std::int64_t tx = 0;
};

struct Cta {
  Memory smem;                            // mosaic: the dynamic SMEM stack
  std::map<std::string, Memory> buffers;  // interpret: one per live allocation
  std::vector<BarrierModel> slots;        // mosaic: every mbarrier of the kernel
  std::map<std::string, std::vector<InterpretBarrier>> barriers;  // interpret: per live allocation
  std::vector<BarrierKeyRecord> barrier_records;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> barrier_record_index;
  std::vector<BufferRecord> buffer_records;
  std::map<std::string, std::size_t> buffer_record_index;
  // Allocation name -> references left: the block's threads for a thread-collective scope, else 1.
  // An allocation exists while it has references; entering it again then allocates anew.
  std::map<std::string, std::int64_t> live_refs;
  std::vector<WaitRecord> waits;
};

struct Thread {
  std::int64_t rank = 0;
  std::int64_t index = 0;
  std::vector<Step> steps;
  std::size_t pc = 0;
  std::map<std::string, std::int64_t> waits_on;  // barrier identity -> waits done (parity)
  std::int64_t syncs_reached = 0;
  bool at_sync = false;
  bool finished() const { return pc >= steps.size(); }
};

class Execution {
 public:
  explicit Execution(Checker& ck)
      : ck_(ck), c_(ck.c), mesh_(ck.mesh), mosaic_(ck.profile == Profile::kMosaic) {}

  Outcome run() {
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
            cta.slots[static_cast<std::size_t>(slot_base_[static_cast<std::size_t>(slot)] + i)]
                .init(barrier_count(*a));
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
        build_steps(c_.program, th);
        threads_.push_back(std::move(th));
      }
    }
    schedule();
    return outcome();
  }

 private:
  Checker& ck_;
  const Case& c_;
  const MeshFacts& mesh_;
  const bool mosaic_;

  std::map<std::string, const Alloc*> allocs_;
  std::map<std::string, std::int64_t> smem_offset_;
  std::int64_t smem_size_ = 0;
  std::map<std::string, int> slot_of_;
  std::vector<std::int64_t> slot_base_;
  std::int64_t slot_base_total_ = 0;
  std::map<const Op*, CopyFacts> copies_;

  std::vector<Cta> ctas_;
  std::vector<Thread> threads_;
  std::map<std::string, Memory> outputs_;
  // Per output element: kOutputNotWritten (or undefined), kOutputWritten, kOutputRacy
  // (output_races.h).
  std::map<std::string, std::vector<std::uint8_t>> written_;

  // ---- static layout ---------------------------------------------------------------------

  std::string slot_key(const Alloc& a) const {
    std::string key = a.kind == AllocKind::kBarrier ? "B" : "C";
    key += std::to_string(a.num_arrivals) + "/" + std::to_string(a.num_barriers) + "/" +
           (a.orders_tensor_core ? "t" : "f") + (a.leader_tracked ? "L" : "");
    for (const auto& ax : a.collective_axes) key += "/" + ax.repr();
    return key;
  }

  // Run-scoped allocations as the compiler lays them out: SMEM on a stack of 1024-aligned
  // slices; mbarriers from pools keyed by the barrier's type, reused by sibling scopes.
  void layout() {
    std::map<std::string, std::vector<int>> pools;
    int next_slot = 0;
    std::function<void(const Body&, std::int64_t)> walk = [&](const Body& body, std::int64_t used) {
      for (const Op& op : body) {
        if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
          std::int64_t off = used;
          std::vector<std::pair<std::string, int>> taken;
          for (const Alloc& a : rs->allocs) {
            allocs_[a.name] = &a;
            if (a.kind == AllocKind::kSmem) {
              smem_offset_[a.name] = off;
              // The layout advances by prod(shape) * bits // 8, as the lowering computes it (0 for
              // a single int4); the memory modelled still holds the buffer's packed bytes.
              smem_size_ =
                  std::max(smem_size_, off + packed_bytes(element_count(a.shape), a.dtype));
              off += align_up(element_count(a.shape) * dtype_bits(a.dtype) / 8, kSmemAlignment);
            } else if (a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) {
              auto& pool = pools[slot_key(a)];
              int slot;
              if (pool.empty()) {
                slot = next_slot++;
                slot_base_.push_back(slot_base_total_);
                slot_base_total_ += a.num_barriers;
              } else {
                slot = pool.back();
                pool.pop_back();
              }
              slot_of_[a.name] = slot;
              taken.emplace_back(slot_key(a), slot);
            }
          }
          smem_size_ = std::max(smem_size_, off);
          walk(rs->body, off);
          for (auto it = taken.rbegin(); it != taken.rend(); ++it)
            pools[it->first].push_back(it->second);
        } else if (const auto* w = std::get_if<When>(&op.v)) {
          if (static_value(w->cond).value_or(true))
            walk(w->body, used);  // pl.when(False): never lowered
        }
      }
    };
    walk(c_.program, 0);
    walk_program(c_.program, [&](const Op& op, const Scope& scope) {
      if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
        CopyFacts f = copy_facts(op, *cp, c_, scope);
        if (mosaic_) resolve_collective(f, mesh_);  // interpret mode ignores collective axes
        copies_.emplace(&op, std::move(f));
      }
    });
  }

  // Arrivals one phase needs. A ClusterBarrier's count depends on how its axes are read: the
  // compiler maps over each entry (a tuple groups axes); interpret mode flags the declared cluster
  // axes the entries name.
  std::int64_t barrier_count(const Alloc& a) const {
    if (a.kind == AllocKind::kBarrier) return a.num_arrivals;
    std::int64_t blocks = 1;
    if (mosaic_) {
      for (const AxisName& entry : a.collective_axes) {
        std::int64_t size = 1;
        for (const auto& part : entry.parts) {
          size *= mesh_.cuda_cluster()[static_cast<std::size_t>(
              *mesh_.cluster_dim(AxisName::plain(part)))];
        }
        blocks += size - 1;
      }
    } else {
      for (std::size_t k : interpret_collective_cluster_axes(a)) blocks += c_.mesh.cluster[k] - 1;
    }
    return a.num_arrivals * blocks;
  }

  // Interpret mode: the declared cluster axes (by position) a ClusterBarrier is collective over.
  std::vector<std::size_t> interpret_collective_cluster_axes(const Alloc& a) const {
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < c_.mesh.cluster_names.size(); ++k) {
      for (const AxisName& entry : a.collective_axes) {
        if (entry == c_.mesh.cluster_names[k]) {
          out.push_back(k);
          break;
        }
      }
    }
    return out;
  }

  // ---- per-thread programs ----------------------------------------------------------------

  void build_steps(const Body& body, Thread& th) {
    for (const Op& op : body) {
      if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
        if (mosaic_ && mesh_.multithreaded() && !rs->collective_axes.empty()) {
          th.steps.push_back({Step::Kind::kBlockSync, &op});  // gpu.barrier() at entry
        }
        th.steps.push_back({Step::Kind::kEnter, &op});
        build_steps(rs->body, th);
        th.steps.push_back({Step::Kind::kExit, &op});
      } else if (const auto* w = std::get_if<When>(&op.v)) {
        if (eval_cond(w->cond, mesh_, th.rank, th.index)) build_steps(w->body, th);
      } else if (const auto* l = std::get_if<Loop>(&op.v)) {
        for (std::int64_t i = 0; i < l->trip_count; ++i) build_steps(l->body, th);
      } else if (std::holds_alternative<CopyGmemToSmem>(op.v)) {
        th.steps.push_back({Step::Kind::kCopy, &op});
      } else if (std::holds_alternative<CopySmemToGmem>(op.v)) {
        th.steps.push_back({Step::Kind::kCopyOut, &op});
      } else if (std::holds_alternative<BarrierArrive>(op.v)) {
        th.steps.push_back({Step::Kind::kArrive, &op});
      } else if (std::holds_alternative<BarrierWait>(op.v)) {
        th.steps.push_back({Step::Kind::kWait, &op});
      }
    }
  }

  // ---- state access -------------------------------------------------------------------------

  Cta& cta(std::int64_t r) { return ctas_[static_cast<std::size_t>(r)]; }

  View buffer(std::int64_t rank, const std::string& name) {
    const Alloc* a = allocs_.at(name);
    if (mosaic_) return View{&cta(rank).smem, smem_offset_.at(name), a->dtype};
    return View{&cta(rank).buffers[name], 0, a->dtype};
  }

  BarrierModel& barrier(std::int64_t rank, const std::string& name, std::int64_t index) {
    const int slot = slot_of_.at(name);
    return cta(rank)
        .slots[static_cast<std::size_t>(slot_base_[static_cast<std::size_t>(slot)] + index)];
  }
  InterpretBarrier& ibarrier(std::int64_t rank, const std::string& name, std::int64_t index) {
    return cta(rank).barriers.at(name)[static_cast<std::size_t>(index)];
  }

  static std::string thread_repr(std::int64_t rank, std::int64_t t) {
    return "Warpgroup(device_id=0, cluster_id=0, block_id=" + std::to_string(rank) +
           ", warpgroup_id=" + std::to_string(t) + ")";
  }

  // Raises interpret mode's run-time error for a barrier invariant violation at `where`.
  void raise(const InterpretBarrier::Violation& v, const std::string& where) {
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
          return Holes{
              {"id", "0"}, {"thread", v.thread}, {"last", n(v.last)}, {"phase", n(v.phase)}};
        });
        break;
    }
  }

  std::string barrier_identity(const std::string& name, std::int64_t index) const {
    // Each thread keeps one parity bit per mbarrier: per pool slot under the compiler, per
    // allocation in interpret mode.
    if (mosaic_)
      return "slot" + std::to_string(slot_of_.at(name)) + "[" + std::to_string(index) + "]";
    return name + "[" + std::to_string(index) + "]";
  }

  BarrierKeyRecord& record(std::int64_t rank, const std::string& name, std::int64_t index) {
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

  static void note_state(BarrierKeyRecord& r, const BarrierModel& b) {
    r.count = b.count();
    r.pending = b.pending();
    r.tx = b.tx();
  }
  void note_state(std::int64_t rank, const std::string& name, std::int64_t index) {
    BarrierKeyRecord& r = record(rank, name, index);
    if (mosaic_) {
      note_state(r, barrier(rank, name, index));
    } else {
      const InterpretBarrier& b = ibarrier(rank, name, index);
      r.count = b.num_arrivals();
      r.pending = b.num_arrivals() - b.arrivals_count();
    }
  }

  // `arrivals` arrivals, arming `bytes`, on a barrier of CTA `rank`; `where` is the op.
  void arrive(std::int64_t rank, const std::string& name, std::int64_t index, std::int64_t arrivals,
              std::int64_t bytes, const std::string& where) {
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

  // A copy arms its barrier from every lane of the warpgroup (spec 3.3): each lane arrives once
  // with its share of the expect_tx, lane 0 first. On a barrier counted in Pallas arrivals the 128
  // lanes are one arrival. An orders_tensor_core barrier counts single lanes: while its phase has
  // at least 128 arrivals pending the lanes are one update, otherwise they go one by one and a
  // phase may complete before the last lane (as on the hardware).
  void arm(std::int64_t rank, const CopyFacts& f, std::int64_t bytes, bool pred) {
    const CopyGmemToSmem& cp = *f.copy;
    const std::string& name = cp.barrier->alloc;
    const std::int64_t index = cp.barrier->index.value_or(0);
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
          cp.predicate && !gated ? static_value(*cp.predicate) : std::optional<bool>(true);
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

  void complete_tx(std::int64_t rank, const std::string& name, std::int64_t index,
                   std::int64_t bytes) {
    BarrierKeyRecord& r = record(rank, name, index);
    BarrierModel& b = barrier(rank, name, index);  // TMA completions: the compiler's barriers
    r.counters.received += bytes;
    r.counters.phases += b.complete_tx(bytes);
    note_state(r, b);
  }

  // ---- scopes -------------------------------------------------------------------------------

  void enter(const Thread& th, const Op& op, const RunScoped& rs) {
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

  // Interpret mode allocates a ClusterBarrier once for the cluster: one barrier per block, shared
  // by every thread of the cluster. An axis naming the thread trips an assert in its callback.
  void enter_cluster_barrier(const Thread& th, const Op& op, const Alloc& a) {
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
  std::map<std::pair<std::int64_t, std::string>, std::int64_t>
      ref_counts_;  // interpret cluster barriers

  void leave(const Thread& th, const Op& op, const RunScoped& rs) {
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

  // ---- interpret mode's barrier reallocation check (0.12.0.1; interpret_reallocation.h) -----

  void realloc_on_allocate(const Thread& th, const Op& op, const RunScoped& rs) {
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
  void realloc_on_deallocate(const Thread& th, const std::string& name, std::int64_t index) {
    if (!realloc_checked_) return;
    realloc_.on_deallocate(thread_repr(th.rank, th.index), {th.rank, name, index},
                           ibarrier(th.rank, name, index));
  }
  void realloc_on_final_deallocate(std::int64_t rank, const std::string& name, std::int64_t index,
                                   const Op& op) {
    if (!realloc_checked_) return;
    if (const auto v =
            realloc_.on_final_deallocate({rank, name, index}, ibarrier(rank, name, index)))
      raise_realloc(*v, op.path);
  }
  void raise_realloc(const InterpretReallocation::Violation& v, const std::string& where) {
    ck_.check(RuleId::kRunBarrierReallocUnobserved, true, where, [&] {
      return Holes{{"thread", v.thread},
                   {"id", "0"},
                   {"last", std::to_string(v.last)},
                   {"phase", std::to_string(v.phase)}};
    });
  }
  InterpretReallocation realloc_;
  const bool realloc_checked_ = !mosaic_ && ck_.jax_at_least(JaxVersion::k0_12_0_1);

  void snapshot(std::int64_t rank, const Alloc& a) {
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

  // ---- copies -------------------------------------------------------------------------------

  using Strides = RankStrides;

  // The input's bytes, filled once per prediction.
  const std::vector<std::uint8_t>& input_bytes(const ArraySpec& a) {
    auto it = inputs_.find(&a);
    if (it == inputs_.end()) it = inputs_.emplace(&a, shared_fill_bytes(a)).first;
    return *it->second;
  }
  std::map<const ArraySpec*, std::shared_ptr<const std::vector<std::uint8_t>>> inputs_;
  std::map<const CopyFacts*, bool> bulk_;  // bulk_path per copy, worked out on its first issue

  // Runs `write`, which writes bytes [at, at + n) of `m` on behalf of writer_, and keeps their
  // writers (smem_races.h). A write that meets no other writer's bytes just claims them; else
  // its changed bytes are compared one by one.
  template <class Write>
  void guarded_write(Memory& m, std::size_t at, std::size_t n, Write write) {
    if (m.writers.empty()) {
      if (!smem_spans_meet_another(m.spans, at, at + n, writer_)) {
        write();
        smem_add_span(m.spans, at, at + n, writer_);
        if (m.spans.size() > kSmemMaxSpans) smem_writers_of(m.spans, m.writers, m.bytes.size());
        return;
      }
      smem_writers_of(m.spans, m.writers, m.bytes.size());
    }
    std::uint16_t* const w = m.writers.data() + at;
    if (!smem_other_writer(w, n, writer_)) {
      write();
      std::fill_n(w, n, writer_);
      return;
    }
    race_before_.assign(m.bytes.begin() + static_cast<std::ptrdiff_t>(at),
                        m.bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
    write();
    if (settle_smem_write(w, m.undef.data() + at, race_before_.data(), m.bytes.data() + at, n,
                          writer_))
      m.any_undef = true;
  }
  // The bytes of elements [e, e + n) of `v`.
  static std::pair<std::size_t, std::size_t> byte_span(const View& v, std::int64_t e,
                                                       std::int64_t n) {
    const int w = dtype_bits(v.dtype);
    const std::int64_t first = w == 4 ? e / 2 : e * (w / 8);
    const std::int64_t end = w == 4 ? (e + n + 1) / 2 : (e + n) * (w / 8);
    return {static_cast<std::size_t>(v.offset + first), static_cast<std::size_t>(end - first)};
  }
  std::uint16_t writer_ = kSmemNoWriter;  // the thread whose copy is writing
  std::vector<std::uint8_t> race_before_;

  // Thread `th` writes region `region` (dst coords) of `dst_rank`'s destination from the issuer's
  // source slice, shifted by `shift` along dst dim `shift_dim`. Elements outside the source array
  // are zeros on the tensor-map path, undefined on the bulk and cp.async paths, and left alone by
  // interpret mode.
  void write_region(const Thread& th, const CopyFacts& f, std::int64_t dst_rank,
                    const ResolvedSlice& slice,
                    const std::vector<std::pair<std::int64_t, std::int64_t>>& region, int shift_dim,
                    std::int64_t shift, bool bulk) {
    writer_ = smem_writer(th.rank, mesh_.num_threads(), th.index);
    write_region_bytes(f, dst_rank, slice, region, shift_dim, shift, bulk);
  }

  void write_region_bytes(const CopyFacts& f, std::int64_t dst_rank, const ResolvedSlice& slice,
                          const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                          int shift_dim, std::int64_t shift, bool bulk) {
    View dst = buffer(dst_rank, f.copy->dst);
    const std::vector<std::uint8_t>& src = input_bytes(*f.src);
    const int bits = static_cast<int>(f.bits_per_element);
    // Leading integer indices of dst select a sub-block of the allocation.
    const Strides alloc_strides = row_major_rank_strides(f.dst->shape);
    std::int64_t d_base = 0;
    for (std::size_t k = 0; k < f.copy->dst_index.size(); ++k)
      d_base += f.copy->dst_index[k] * alloc_strides[k];
    const Strides dst_strides = row_major_rank_strides(f.dst_shape);
    const Strides src_strides = row_major_rank_strides(f.src->shape);
    // Per dst dim: the source dim's stride, size and the source index of the region's first row.
    const std::size_t rank = region.size();
    Strides s_stride{}, s_size{}, s_first{}, box{};
    std::int64_t s_const = 0;
    bool const_in_bounds = true;
    std::size_t k = 0;
    for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
      if (slice.size[i] == 0) {  // squeezed: a fixed index
        s_const += slice.start[i] * src_strides[i];
        const_in_bounds =
            const_in_bounds && slice.start[i] >= 0 && slice.start[i] < f.src->shape[i];
        continue;
      }
      s_stride[k] = src_strides[i];
      s_size[k] = f.src->shape[i];
      s_first[k] =
          slice.start[i] + region[k].first + (static_cast<int>(k) == shift_dim ? shift : 0);
      box[k] = region[k].second;
      ++k;
    }
    enum class Oob { kUndefined, kZero };
    // Interpret mode reads out-of-bounds elements as zeros whatever oob_mode says (0.11.2).
    const Oob oob =
        mosaic_ && (ck_.arch_major() < 9 || (bulk && f.copy->oob_mode != OobMode::kZeros))
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

  std::vector<std::pair<std::int64_t, std::int64_t>> whole(const Shape& shape) const {
    std::vector<std::pair<std::int64_t, std::int64_t>> r;
    for (auto d : shape) r.emplace_back(0, d);
    return r;
  }

  ResolvedSlice src_slice(const CopyFacts& f, const Thread& th) const {
    return resolve_slice(f.src->shape, f.copy->src_index, [&](const std::string& axis) {
      return mesh_.axis_index(th.rank, th.index, axis);
    });
  }

  // Interpret mode (spec 4): the issuer reads its whole source (out-of-bounds elements as zeros),
  // writes it into its own destination truncated to the destination's shape, and arrives once on
  // its own barrier. Collective axes, leader tracking and oob_mode are ignored; a predicate never
  // gets this far (interpret.copy.predicate).
  void copy_interpret(const Thread& th, const CopyFacts& f) {
    const CopyGmemToSmem& cp = *f.copy;
    write_region(th, f, th.rank, src_slice(f, th), whole(f.dst_shape), -1, 0, false);
    arrive(th.rank, cp.barrier->alloc, cp.barrier->index.value_or(0), 1, 0, f.op->path);
  }

  // cp.async (spec 3.4): the warpgroup's threads copy a linear run of GMEM from the slice's first
  // element into the destination, element e from element base+e, whatever the slice's shape; out
  // of the array is undefined behaviour.
  void copy_cp_async(const Thread& th, const CopyFacts& f) {
    const ResolvedSlice slice = src_slice(f, th);
    const auto strides = row_major_strides(f.src->shape);
    std::int64_t base = 0;
    for (std::size_t i = 0; i < f.src->shape.size(); ++i) base += slice.start[i] * strides[i];
    const std::int64_t total = element_count(f.src->shape);
    const std::vector<std::uint8_t>& src = input_bytes(*f.src);
    View dst = buffer(th.rank, f.copy->dst);
    const auto alloc_strides = row_major_strides(f.dst->shape);
    std::int64_t d_base = 0;
    for (std::size_t k = 0; k < f.copy->dst_index.size(); ++k)
      d_base += f.copy->dst_index[k] * alloc_strides[k];
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

  void copy_tma(const Thread& th, const CopyFacts& f) {
    const CopyGmemToSmem& cp = *f.copy;
    const bool pred = !cp.predicate || eval_cond(*cp.predicate, mesh_, th.rank, th.index);
    const std::string& bar = cp.barrier->alloc;
    const std::int64_t bidx = cp.barrier->index.value_or(0);
    const std::int64_t D = f.bytes;
    ResolvedSlice slice = src_slice(f, th);
    // LaunchContext drops dims of size 1 in both GMEM and the slice, with their index: an
    // out-of-bounds start there reads element 0.
    for (std::size_t i = 0; i < f.src->shape.size(); ++i) {
      if (f.src->shape[i] == 1 && slice.size[i] <= 1) slice.start[i] = 0;
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
        const int p = static_cast<int>(cp.partition_axis);
        write_region(th, f, th.rank, slice, whole(f.dst_shape), p,
                     i * f.dst_shape[static_cast<std::size_t>(p)], bulk);
        complete_tx(leader, bar, bidx, D);
      } else {
        const auto region = *multicast_chunk(f.dst_shape, 2, i);
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
      const auto region = *multicast_chunk(f.dst_shape, f.n, i);
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

  // A store into an output: elements two writers leave with different values race and are not
  // compared (output_races.h).
  void copy_out(const Thread& th, const CopySmemToGmem& cp) {
    std::vector<std::uint8_t>& written = written_.at(cp.dst);
    const std::vector<std::uint8_t> before_written = written;
    const std::vector<std::uint8_t> before = outputs_.at(cp.dst).bytes;
    std::fill(written.begin(), written.end(), kOutputUntouched);
    copy_out_elements(th, cp);
    DType dtype{};
    for (const auto& o : c_.outputs) {
      if (o.name == cp.dst) dtype = o.dtype;
    }
    const std::vector<std::uint8_t>& now = outputs_.at(cp.dst).bytes;
    settle_output_store(written, before_written, output_writers_[cp.dst],
                        th.rank * mesh_.num_threads() + th.index, [&](std::int64_t i) {
                          return load_element(before, dtype, i) != load_element(now, dtype, i);
                        });
  }
  std::map<std::string, std::vector<std::int64_t>> output_writers_;  // per element: -1 or writer

  void copy_out_elements(const Thread& th, const CopySmemToGmem& cp) {
    const Alloc* a = allocs_.at(cp.src);
    const View src = buffer(th.rank, cp.src);
    const ArraySpec* out = nullptr;
    for (const auto& o : c_.outputs) {
      if (o.name == cp.dst) out = &o;
    }
    const auto alloc_strides = row_major_strides(a->shape);
    std::int64_t base = 0;
    for (std::size_t k = 0; k < cp.src_index.size(); ++k)
      base += cp.src_index[k] * alloc_strides[k];
    const Shape src_shape(a->shape.begin() + static_cast<std::ptrdiff_t>(cp.src_index.size()),
                          a->shape.end());
    const ResolvedSlice slice = resolve_slice(
        out->shape, cp.dst_index,
        [&](const std::string& axis) { return mesh_.axis_index(th.rank, th.index, axis); });
    const Strides src_strides = row_major_rank_strides(src_shape);
    const Strides out_strides = row_major_rank_strides(out->shape);
    View dst{&outputs_.at(out->name), 0, out->dtype};
    auto& written = written_.at(out->name);
    // The output offset of the source's origin, and the output stride each source dim runs along.
    const std::size_t rank = src_shape.size();
    Strides along{};
    std::int64_t d0 = 0;
    for (std::size_t i = 0, k = 0; i < out->shape.size(); ++i) {
      d0 += slice.start[i] * out_strides[i];
      if (slice.size[i] != 0 && k < rank) along[k++] = out_strides[i];
    }
    const int bits = dtype_bits(out->dtype);
    const auto element = [&](std::int64_t s, std::int64_t d) {
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
      if (bits >= 8 && dtype_bits(a->dtype) == bits && along[last] == 1 && row_defined()) {
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

  // ---- barrier ops ---------------------------------------------------------------------------

  void barrier_arrive(const Thread& th, const Op& op, const BarrierUse& use) {
    const Alloc* a = allocs_.at(use.alloc);
    const std::int64_t idx = use.index.value_or(0);
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

  // Returns whether the wait passed. The compiler's waits are parity waits on the mbarrier;
  // interpret mode's track each thread's last observed phase.
  bool barrier_wait(Thread& th, const Op& op, const BarrierUse& use, bool first_try) {
    const std::int64_t idx = use.index.value_or(0);
    Cta& x = cta(th.rank);
    bool passes = false;
    std::int64_t phase = 0;
    const std::string id = barrier_identity(use.alloc, idx);
    if (mosaic_) {
      phase = th.waits_on[id];
      passes = barrier(th.rank, use.alloc, idx).parity_wait_passes(phase % 2);
    } else {
      const auto violation =
          ibarrier(th.rank, use.alloc, idx).wait(thread_repr(th.rank, th.index), passes, phase);
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
  std::map<const Thread*, std::size_t> th_wait_record_;

  bool block_sync(Thread& th, const Op& op, bool first_try) {
    Cta& x = cta(th.rank);
    const std::int64_t s = th.syncs_reached;
    if (first_try) {
      th.at_sync = true;
      x.waits.push_back(WaitRecord{th.index, op.path, "block_sync", s, false});
      th_wait_record_[&th] = x.waits.size() - 1;
    }
    for (const Thread& u : threads_) {
      if (u.rank != th.rank || &u == &th) continue;
      const bool reached =
          u.syncs_reached > s || (u.syncs_reached == s && u.at_sync) || u.finished();
      if (!reached) return false;
    }
    x.waits[th_wait_record_[&th]].completed = true;
    return true;
  }

  // ---- the canonical schedule ----------------------------------------------------------------

  // Runs `th` until it blocks or finishes; returns whether it made progress.
  bool advance(Thread& th) {
    bool progressed = false;
    bool first_try = !blocked_.count(&th);
    while (!th.finished()) {
      const Step& st = th.steps[th.pc];
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
          copy_out(th, std::get<CopySmemToGmem>(st.op->v));
          break;
        case Step::Kind::kArrive:
          barrier_arrive(th, *st.op, std::get<BarrierArrive>(st.op->v).barrier);
          break;
      }
      blocked_.erase(&th);
      first_try = true;
      ++th.pc;
      progressed = true;
    }
    return progressed;
  }
  std::set<const Thread*> blocked_;

  void schedule() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (Thread& th : threads_) progress = advance(th) || progress;
    }
  }

  // ---- the outcome ----------------------------------------------------------------------------

  Outcome outcome() {
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
      std::stable_sort(
          rec.waits.begin(), rec.waits.end(),
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
};

}  // namespace

Outcome execute(Checker& ck) { return Execution(ck).run(); }

}  // namespace collfuzz::ref
