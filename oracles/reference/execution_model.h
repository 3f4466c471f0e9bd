// The reference's execution model (execution.h): the state one prediction runs on, and the
// class whose members the execution_*.cpp files define, one construct each (docs/reference.md,
// "Where each construct lives"). Internal to oracles/reference.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/fill.h"
#include "harness/core/limits.h"
#include "harness/core/mutants.h"
#include "harness/core/ndarray.h"
#include "harness/core/vector_arith.h"
#include "oracles/reference/barrier_model.h"
#include "oracles/reference/checker.h"
#include "oracles/reference/copy_facts.h"
#include "oracles/reference/execution.h"
#include "oracles/reference/interpret_barrier.h"
#include "oracles/reference/interpret_reallocation.h"
#include "oracles/reference/output_races.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/smem_races.h"
#include "oracles/reference/undefined_runs.h"

namespace collfuzz::ref::exec {

constexpr std::int64_t kSmemAlignment = 1024;
// clusterlaunchcontrol.try_cancel's response: one .b128 value.
constexpr std::int64_t kResponseBytes = 16;

inline std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

// Whether condition `c` holds for Pallas thread `thread` of CTA `rank`.
bool eval_cond(const Cond& c, const MeshFacts& mesh, std::int64_t rank, std::int64_t thread);

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
  enum class Kind : std::uint8_t {
    kEnter,
    kExit,
    kBlockSync,
    kCopy,
    kCopyOut,
    kArrive,
    kWait,
    kStoreCommit,    // commit_smem_to_gmem_group
    kStoreWait,      // wait_smem_to_gmem
    kVectorStore,    // vector_store
    kCommitSmem,     // commit_smem
    kClusterCancel,  // try_cluster_cancel (execution_cluster_cancel.cpp)
    // The ops of one warp_map (a When marked from_warp_map): its warps' copies, in warp order,
    // lie between the two (the compiler's profile only).
    kWarpMapBegin,
    kWarpMapEnd,
    // A loop's carried value (Loop::carry): its init before the first trip, its next after each.
    kCarryInit,
    kCarryNext,
  };
  Kind kind;
  const Op* op;
  std::int64_t iteration = 0;  // inside a loop: its trip (the value of the loop's index)
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

// The bulk async-groups of one thread's stores (execution_store_groups.cpp; PTX
// cp.async.bulk.commit_group / wait_group, counted per thread as the hardware does). Stores are
// numbered in issue order; group k holds the stores before group_ends[k] not in an older group.
// The groups retire oldest first, so the stores that finished reading SMEM (writing GMEM) are
// always those numbered below read_done() (write_done()).
struct StoreGroups {
  std::int64_t issued = 0;
  std::vector<std::int64_t> group_ends;
  std::size_t read_retired = 0;
  std::size_t write_retired = 0;
  std::int64_t read_done() const { return read_retired ? group_ends[read_retired - 1] : 0; }
  std::int64_t write_done() const { return write_retired ? group_ends[write_retired - 1] : 0; }
};

// A store still reading its SMEM source: bytes [lo, hi) of `mem`. A write that changes any of them
// before the store's group retires its read races with it (execution_store_groups.cpp).
struct PendingStoreRead {
  const Memory* mem = nullptr;
  std::size_t lo = 0;
  std::size_t hi = 0;
  std::int64_t thread = 0;  // Execution::thread_id
  std::int64_t seq = 0;     // the store's number in its thread's issue order
  std::string output;
  // The output element ranges [begin, end) it wrote: whatever stores land after it, it may land
  // last.
  std::vector<std::pair<std::int64_t, std::int64_t>> elements;
  const std::string* op = nullptr;  // the store's JSON path
  std::int64_t rank = 0;
};

// SMEM bytes [lo, hi) of `mem` that a thread's vector store wrote through the generic proxy and
// no commit_smem of the thread has fenced yet: a TMA store reading them races
// (execution_vectors.cpp).
struct UnfencedWrite {
  const Memory* mem = nullptr;
  std::size_t lo = 0;
  std::size_t hi = 0;
  const std::string* op = nullptr;  // the vector store's JSON path
};

struct Thread {
  std::int64_t rank = 0;
  std::vector<UnfencedWrite> unfenced;
  // The values of the loops' carries this thread reached, by name: the trip's, then the result.
  std::map<std::string, std::vector<VectorElement>> carries;
  std::int64_t index = 0;
  StoreGroups stores;
  std::vector<Step> steps;
  std::size_t pc = 0;
  std::map<std::string, std::int64_t> waits_on;  // barrier identity -> waits done (parity)
  std::int64_t syncs_reached = 0;
  bool at_sync = false;
  bool finished() const { return pc >= steps.size(); }
};

class Execution {
 public:
  explicit Execution(Checker& ck, Schedule schedule = {})
      : ck_(ck),
        c_(ck.c),
        mesh_(ck.mesh),
        mosaic_(ck.profile == Profile::kMosaic),
        schedule_(std::move(schedule)) {}

  Outcome run(std::vector<std::size_t>* thread_steps = nullptr);

 private:
  // The trip of the enclosing loop of the step being run: a loop index's value, and what a
  // slot (`.at[i % 2]` of an SMEM ref or a barrier array) resolves by.
  std::int64_t iteration_ = 0;
  Checker& ck_;
  const Case& c_;
  const MeshFacts& mesh_;
  const bool mosaic_;
  const Schedule schedule_;

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

  std::string slot_key(const Alloc& a) const;

  // Run-scoped allocations as the compiler lays them out: SMEM on a stack of 1024-aligned
  // slices; mbarriers from pools keyed by the barrier's type, reused by sibling scopes.
  void layout();

  // Arrivals one phase needs. A ClusterBarrier's count depends on how its axes are read: the
  // compiler maps over each entry (a tuple groups axes); interpret mode flags the declared cluster
  // axes the entries name.
  std::int64_t barrier_count(const Alloc& a) const;

  // Interpret mode: the declared cluster axes (by position) a ClusterBarrier is collective over.
  std::vector<std::size_t> interpret_collective_cluster_axes(const Alloc& a) const;

  // ---- per-thread programs ----------------------------------------------------------------

  void build_steps(const Body& body, Thread& th, std::int64_t iteration);

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
    return interpret_thread_repr(rank, t);
  }

  // Raises interpret mode's run-time error for a barrier invariant violation at `where`.
  void raise(const InterpretBarrier::Violation& v, const std::string& where);

  std::string barrier_identity(const std::string& name, std::int64_t index) const;

  BarrierKeyRecord& record(std::int64_t rank, const std::string& name, std::int64_t index);

  static void note_state(BarrierKeyRecord& r, const BarrierModel& b);
  void note_state(std::int64_t rank, const std::string& name, std::int64_t index);

  // `arrivals` arrivals, arming `bytes`, on a barrier of CTA `rank`; `where` is the op.
  void arrive(std::int64_t rank, const std::string& name, std::int64_t index, std::int64_t arrivals,
              std::int64_t bytes, const std::string& where);

  // A copy arms its barrier from every lane of the warpgroup (spec 3.3): each lane arrives once
  // with its share of the expect_tx, lane 0 first. On a barrier counted in Pallas arrivals the 128
  // lanes are one arrival. An orders_tensor_core barrier counts single lanes: while its phase has
  // at least 128 arrivals pending the lanes are one update, otherwise they go one by one and a
  // phase may complete before the last lane (as on the hardware).
  void arm(std::int64_t rank, const CopyFacts& f, std::int64_t bytes, bool pred);

  void complete_tx(std::int64_t rank, const std::string& name, std::int64_t index,
                   std::int64_t bytes);

  // ---- scopes -------------------------------------------------------------------------------

  void enter(const Thread& th, const Op& op, const RunScoped& rs);

  // Interpret mode allocates a ClusterBarrier once for the cluster: one barrier per block, shared
  // by every thread of the cluster. An axis naming the thread trips an assert in its callback.
  void enter_cluster_barrier(const Thread& th, const Op& op, const Alloc& a);
  std::map<std::pair<std::int64_t, std::string>, std::int64_t>
      ref_counts_;  // interpret cluster barriers

  void leave(const Thread& th, const Op& op, const RunScoped& rs);

  // ---- interpret mode's barrier reallocation check (0.12.0.1; interpret_reallocation.h) -----

  void realloc_on_allocate(const Thread& th, const Op& op, const RunScoped& rs);
  void realloc_on_deallocate(const Thread& th, const std::string& name, std::int64_t index);
  void realloc_on_final_deallocate(std::int64_t rank, const std::string& name, std::int64_t index,
                                   const Op& op);
  void raise_realloc(const InterpretReallocation::Violation& v, const std::string& where);
  InterpretReallocation realloc_;
  const bool realloc_checked_ = !mosaic_ && ck_.jax_at_least(JaxVersion::k0_12_0_1);

  void snapshot(std::int64_t rank, const Alloc& a);

  // ---- copies -------------------------------------------------------------------------------

  using Strides = RankStrides;

  // The input's bytes, filled once per prediction.
  const std::vector<std::uint8_t>& input_bytes(const ArraySpec& a);
  std::map<const ArraySpec*, std::shared_ptr<const std::vector<std::uint8_t>>> inputs_;
  std::map<const CopyFacts*, bool> bulk_;  // bulk_path per copy, worked out on its first issue

  // Runs `write`, which writes bytes [at, at + n) of `m` on behalf of writer_, and keeps their
  // writers (smem_races.h). A write that meets no other writer's bytes just claims them; else
  // its changed bytes are compared one by one.
  template <class Write>
  void guarded_write(Memory& m, std::size_t at, std::size_t n, Write write);
  template <class Write>
  void claim_write(Memory& m, std::size_t at, std::size_t n, Write write);
  // The bytes of elements [e, e + n) of `v`.
  static std::pair<std::size_t, std::size_t> byte_span(const View& v, std::int64_t e,
                                                       std::int64_t n) {
    const int w = dtype_bits(v.dtype);
    const std::int64_t first = w == 4 ? e / 2 : e * (w / 8);
    const std::int64_t end = w == 4 ? (e + n + 1) / 2 : (e + n) * (w / 8);
    return {static_cast<std::size_t>(v.offset + first), static_cast<std::size_t>(end - first)};
  }
  std::uint16_t writer_ = kSmemNoWriter;  // the thread whose copy is writing
  const Op* writing_op_ = nullptr;        // and its op
  std::vector<std::uint8_t> race_before_;

  // Thread `th` writes region `region` (dst coords) of `dst_rank`'s destination from the issuer's
  // source slice, shifted by `shift` along dst dim `shift_dim`. Elements outside the source array
  // are zeros on the tensor-map path, undefined on the bulk and cp.async paths, and left alone by
  // interpret mode.
  void write_region(const Thread& th, const CopyFacts& f, std::int64_t dst_rank,
                    const ResolvedSlice& slice,
                    const std::vector<std::pair<std::int64_t, std::int64_t>>& region, int shift_dim,
                    std::int64_t shift, bool bulk);

  // SMEM holds its bytes as the hardware lays them out: a transformed buffer's logical element e
  // lies at byte places(a)[e] of it (execution_scopes.cpp; empty for transforms JAX refuses).
  const std::vector<std::int64_t>& places(const Alloc& a);
  // places(a) of a transformed buffer whose places are known; nullptr otherwise (logical order).
  const std::vector<std::int64_t>* transformed_places(const Alloc& a);
  std::map<const Alloc*, std::vector<std::int64_t>> places_;
  // A copy into a transformed buffer, element by element at its physical place, its GMEM side
  // addressed as a tiled TMA addresses it (execution_copies.cpp).
  void write_transformed(const CopyFacts& f, View& dst, std::int64_t d_base,
                         const ResolvedSlice& slice,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                         const Strides& s_first, bool undefined_oob);
  void write_region_bytes(const CopyFacts& f, std::int64_t dst_rank, std::int64_t d_base,
                          const ResolvedSlice& slice,
                          const std::vector<std::pair<std::int64_t, std::int64_t>>& region,
                          int shift_dim, std::int64_t shift, bool bulk);

  std::vector<std::pair<std::int64_t, std::int64_t>> whole(const Shape& shape) const {
    std::vector<std::pair<std::int64_t, std::int64_t>> r;
    for (auto d : shape) r.emplace_back(0, d);
    return r;
  }

  ResolvedSlice src_slice(const CopyFacts& f, const Thread& th) const {
    return resolve_slice(
        f.src->shape, f.copy->src_index,
        [&](const std::string& axis) { return mesh_.axis_index(th.rank, th.index, axis); },
        iteration_);
  }

  // Interpret mode (spec 4): the issuer reads its whole source (out-of-bounds elements as zeros),
  // writes it into its own destination truncated to the destination's shape, and arrives once on
  // its own barrier. Collective axes, leader tracking and oob_mode are ignored; a predicate never
  // gets this far (interpret.copy.predicate).
  void copy_interpret(const Thread& th, const CopyFacts& f);

  // cp.async (spec 3.4): the warpgroup's threads copy a linear run of GMEM from the slice's first
  // element into the destination, element e from element base+e, whatever the slice's shape; out
  // of the array is undefined behaviour.
  void copy_cp_async(const Thread& th, const CopyFacts& f);

  void copy_tma(const Thread& th, const CopyFacts& f);

  // A store into an output: elements two writers leave with different values race and are not
  // compared (output_races.h). With reduction_op, each element is combined with the output's
  // (harness/core/reduction.h): defined where the output element was written and the source is
  // defined. Interpret mode refuses it when a thread reaches it, as it does a store with a
  // predicate; under the compiler a false predicate stores nothing.
  void copy_out(Thread& th, const Op& op, const CopySmemToGmem& cp);
  // Per output element: -1 or its last writer, a store_writer() mark.
  std::map<std::string, OutputWriters> output_writers_;

  // ---- store groups (execution_store_groups.cpp) ---------------------------------------------

  // A store's writer mark: its thread and its number in the thread's issue order.
  static constexpr std::int64_t kStoreSeqSpan = std::int64_t{1} << 32;
  std::int64_t thread_id(const Thread& th) const {
    return th.rank * mesh_.num_threads() + th.index;
  }
  static std::int64_t store_writer(std::int64_t thread, std::int64_t seq) {
    return thread * kStoreSeqSpan + seq;
  }
  // Whether a store of `th` issued now is unordered with the earlier store marked `prev`: another
  // thread's, or one of its own whose GMEM write no wait has retired.
  bool store_unordered(const Thread& th, std::int64_t prev) const {
    return prev / kStoreSeqSpan != thread_id(th) || prev % kStoreSeqSpan >= th.stores.write_done();
  }
  // commit_smem_to_gmem_group; wait_smem_to_gmem(n, wait_read_only). Interpret mode stores at
  // issue time, so there the groups hold nothing that a wait changes.
  void commit_stores(Thread& th);
  void wait_stores(Thread& th, std::int64_t n, bool read_only);
  // After a store's own commit and wait: keep its SMEM read pending while its group has not
  // retired it.
  void note_store_read(Thread& th, const Op& op, const CopySmemToGmem& cp, std::int64_t seq,
                       std::vector<std::pair<std::int64_t, std::int64_t>> elements);
  // Whether a write of bytes [at, at + n) of `m` meets a pending store read; after the write,
  // each store read whose bytes it changed races: its output elements are not compared.
  bool meets_store_read(const Memory& m, std::size_t at, std::size_t n) const;
  void settle_store_reads(const Memory& m, std::size_t at, std::size_t n,
                          const std::vector<std::uint8_t>& before,
                          const std::vector<std::uint8_t>& undef_before);
  std::vector<PendingStoreRead> store_reads_;
  std::vector<std::uint8_t> store_read_before_, store_read_undef_before_;

  // A vector store (execution_vectors.cpp); its writer mark is store_writer(thread,
  // kVectorStoreSeq), which store_unordered, for a later TMA store, always finds unordered.
  void vector_store(Thread& th, const Op& op, const VectorStore& vs);
  // A loop's carry takes the value of its init (`next` false) or of its next.
  void carry(Thread& th, const Loop::Carry& carry, bool next, const std::string& where);
  void vector_store_smem(Thread& th, const Op& op, const VectorStore& vs);
  // The value's elements, row-major over `shape`, from the refs as they stand (a cluster_ref's
  // from its peer CTA's SMEM); the op at `where` computes it.
  std::vector<VectorElement> vector_values(const Thread& th, const VectorValue& value,
                                           const Shape& shape, DType dtype,
                                           const std::string& where);
  // The CTA whose SMEM a vector load reads: its own, or a cluster_ref's peer. Interpret mode
  // has no DSMEM: a cluster_ref read raises interpret.cluster_ref.unsupported there.
  std::int64_t load_rank(const Thread& th, const VectorValue& load, const std::string& where);
  // The CTA a cluster_ref over `axis` at `index` names for thread `th` (the same refusal in
  // interpret mode); explain's note says that the access at `where` `what`s its `ref`.
  std::int64_t cluster_rank(const Thread& th, const std::string& axis, const DynStart& index,
                            const std::string& where, const std::string& ref, const char* what);
  // The element an SMEM ref `alloc.at[index...]` starts at (a slot for entry 0 at this trip).
  std::int64_t smem_ref_base(const std::string& alloc, const std::vector<std::int64_t>& index,
                             const std::optional<DynStart>& slot) const;
  // The same with a copy's slice `pl.ds(start, size)` of the next dim, as thread `th` computes
  // it: the compiler divides a dynamic start into a tiled dim by the tile, rounding up
  // (UntilingTransform.commute_ndindexer); interpret mode keeps it.
  std::int64_t smem_ref_base(const Thread& th, const std::string& alloc,
                             const std::vector<std::int64_t>& index,
                             const std::optional<DynStart>& slot,
                             const std::optional<IndexEntry>& slice) const;
  // The first unfenced vector store of any thread that wrote a byte of [lo, hi) of `mem`, or
  // nullptr.
  const UnfencedWrite* unfenced_write(const Memory* mem, std::size_t lo, std::size_t hi) const;
  // A TMA store (copy_out) that reads an unfenced vector store's bytes: the elements it wrote
  // (`written`, kOutputWritten) are not compared; explain says why.
  void unfenced_read(const Thread& th, const Op& op, const CopySmemToGmem& cp,
                     std::vector<std::uint8_t>& written);
  static constexpr std::int64_t kVectorStoreSeq = kStoreSeqSpan - 1;

  // `before_written`: the output's written_ marks before this store (a reduction's old value is
  // defined where one is kOutputWritten).
  void copy_out_elements(const Thread& th, const CopySmemToGmem& cp,
                         const std::vector<std::uint8_t>& before_written);

  // ---- barrier ops ---------------------------------------------------------------------------

  void barrier_arrive(const Thread& th, const Op& op, const BarrierUse& use);

  // plgpu.try_cluster_cancel: the thread's arrival (arming 16 bytes or none) and, from the
  // issuing thread, the response in every CTA of the cluster (execution_cluster_cancel.cpp).
  void try_cluster_cancel(const Thread& th, const Op& op, const TryClusterCancel& tc);

  // At a warp_map's entry (the step at th.pc): whether some order of its warps makes a
  // no-complete arrival complete a barrier's phase (run.mbarrier.nocomplete_completes;
  // execution_warp_arrivals.cpp). The reference runs the warps in order otherwise.
  void check_warp_arrivals(const Thread& th);

  // Returns whether the wait passed. The compiler's waits are parity waits on the mbarrier;
  // interpret mode's track each thread's last observed phase.
  bool barrier_wait(Thread& th, const Op& op, const BarrierUse& use, bool first_try);
  std::map<const Thread*, std::size_t> th_wait_record_;

  bool block_sync(Thread& th, const Op& op, bool first_try);

  // ---- the canonical schedule ----------------------------------------------------------------

  // Runs `th` until it blocks, finishes or reaches step `stop`; returns whether it made progress.
  bool advance(Thread& th, std::size_t stop = SIZE_MAX);
  std::set<const Thread*> blocked_;

  void schedule();
  void schedule_randomly(const std::vector<Thread*>& order, std::uint64_t seed);

  // ---- the outcome ----------------------------------------------------------------------------

  Outcome outcome();
};

}  // namespace collfuzz::ref::exec
