// The plan of an accepted case: what every Pallas thread (warpgroup) of every CTA of the modelled
// cluster executes, as hardware-level steps. Plain data: fixed-size records in flat tables,
// names in a string table, no pointers into the Case, so that the CPU simulator (harness/sim)
// and the CUDA executor (which copies the tables to device memory and interprets them with one
// precompiled kernel) run the same thing. docs/simulator.md describes the format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/no_complete_search.h"

namespace collfuzz::lowering {

inline constexpr int kMaxTmaRank = 5;
inline constexpr int kMaxArrayRank = 8;
inline constexpr int kWarpgroupLanes = 128;
inline constexpr std::int64_t kResponseBytes = 16;  // clusterlaunchcontrol.try_cancel's .b128

// A GMEM tensor as a TMA tensor map sees it, and one box of it: dims, strides (in elements) and
// box outermost first. Coordinates may lie out of bounds (negative or past the end).
struct TensorBox {
  std::int32_t rank = 0;
  std::int64_t dims[kMaxTmaRank] = {};
  std::int64_t strides[kMaxTmaRank] = {};
  std::int64_t box[kMaxTmaRank] = {};
  std::int64_t coords[kMaxTmaRank] = {};
};

// A slice of a GMEM array in the array's own dims: per dim its start and size; size 0 marks an
// integer-indexed (squeezed) dim whose index is `start`.
struct ArraySlice {
  std::int32_t rank = 0;
  std::int64_t dims[kMaxArrayRank] = {};
  std::int64_t start[kMaxArrayRank] = {};
  std::int64_t size[kMaxArrayRank] = {};
};

enum class LoadPath : std::uint8_t {
  kTensor,   // cp.async.bulk.tensor through a tensor map: out-of-bounds elements read as zero
  kBulk,     // cp.async.bulk of a contiguous range: out-of-bounds elements are undefined
  kCpAsync,  // cp.async per thread (pre-Hopper): out-of-bounds elements are undefined
};

// One GMEM -> SMEM transfer issued by the elected lane of a warpgroup.
struct LoadOp {
  LoadPath path = LoadPath::kTensor;
  bool predicate = true;   // false: the issuing lane is predicated off, nothing moves
  std::int32_t input = 0;  // Plan::inputs index
  std::int32_t elem_bits = 32;
  std::int64_t smem_offset = 0;      // bytes: start of the region written, same in every receiver
  std::int64_t elements = 0;         // elements of the region (row-major box / linear run)
  std::int64_t complete_bytes = 0;   // complete_tx bytes signalled per receiving CTA
  TensorBox tensor;                  // kTensor
  std::int64_t linear_offset = 0;    // kBulk, kCpAsync: first GMEM element (may be out of bounds)
  std::int64_t linear_elements = 0;  // kBulk, kCpAsync: elements actually moved (UNDEFINED clamps)
  ArraySlice logical;                // kBulk, kCpAsync: the slice, to mark out-of-bounds elements
  std::uint32_t multicast_mask = 0;  // 0: the issuing CTA only; else the 16-bit ctaMask
  // .cta_group::2 (a leader-tracked copy): complete_tx lands on the barrier of `leader`, the CTA of
  // the issuer's pair at index 0 along the collective axis (cluster rank 0 in a 2-CTA cluster; in
  // larger clusters, as JAX 0.12.0.1 allows, the issuer's own pair), not on each receiver's.
  bool complete_at_leader = false;
  std::int32_t leader = 0;
  std::int32_t mbarrier = -1;  // receiving mbarrier (CTA-local index); -1: none (cp.async)
  std::int32_t record = -1;    // Plan::barrier_records index of that barrier
  // kTensor: the tensor map's swizzle in bytes (0: none): each byte the box writes lands at its
  // SMEM address o ^ (((o >> 7) % (swizzle / 16)) << 4) (harness/core/smem_layout.h).
  std::int64_t swizzle = 0;
};

// copy_smem_to_gmem: a TMA store of a contiguous SMEM region into a slice of an output.
struct StoreOp {
  std::int32_t output = 0;  // Plan::outputs index
  std::int32_t elem_bits = 32;
  std::int64_t smem_offset = 0;
  std::int64_t elements = 0;
  ArraySlice slice;                         // in the output's dims
  std::optional<ReductionOp> reduction_op;  // cp.reduce.async.bulk.tensor: combine, not overwrite
  // What follows the store in the same op: cp.async.bulk.commit_group (commit_group=True), then
  // cp.async.bulk.wait_group 0 (the case's `wait`: JAX's wait_smem_to_gmem(0) idiom).
  bool commit = true;
  bool wait = true;
  // fence.proxy.async.shared::cta before the store (JAX's commit_smem(); "commit_smem": false
  // leaves it out).
  bool commit_smem = true;
  // A tiled and/or swizzled SMEM source: the tiling of the ref's trailing dims (its elements in
  // tiled order) and the swizzle of their addresses; rank 0 and swizzle 0: row-major.
  std::int32_t tiling_rank = 0;
  std::int64_t tiling[kMaxArrayRank] = {};
  std::int64_t swizzle = 0;
  // A transposed SMEM source (SmemTranspose): the ref's dim transpose[v] holds the slice's kept
  // (sliced) dim v; its elements are row-major over the ref's own dims. Rank 0: not transposed.
  std::int32_t transpose_rank = 0;
  std::int32_t transpose[kMaxArrayRank] = {};
};

// A node of a vector value (vector_store), operands first (postfix): a constant, a load of an
// SMEM ref or of an input slice, or a binary op on the two values before it.
struct VectorNode {
  VectorKind kind = VectorKind::kConst;
  DType dtype = DType::kFloat32;  // the node's value's (the store's, or a convert's operand's)
  DType from = DType::kFloat32;   // kConvert: its operand's
  std::uint64_t bits = 0;         // kConst
  std::int64_t smem_offset = 0;   // kLoadSmem: bytes, the ref's first element in the CTA's SMEM
  std::int32_t smem_rank = -1;    // kLoadSmem: a cluster_ref's peer CTA (-1: the CTA's own)
  // kLoadSmem of a transformed ref: Plan::smem_places index (element j's byte offset from
  // smem_offset); -1: row-major.
  std::int32_t places = -1;
  std::int32_t input = 0;  // kLoadInput: Plan::inputs index
  ArraySlice slice;        // kLoadInput
  // The node's element count: it is evaluated at the store's element j modulo it (below a
  // broadcast, whose new leading dims repeat its operand; the store's count elsewhere).
  std::int64_t elements = 1;
  // kIota: element j's value is its index (j / iota_inner) % iota_size along the iota's dimension.
  std::int64_t iota_inner = 1;
  std::int64_t iota_size = 1;
  std::int32_t reg = -1;  // kCarry: the thread's register of the carry (Plan::registers)
};

// vector_store: the warpgroup's value, element by element (harness/core/vector_arith.h), stored
// into a slice of an output at once (st.global from every lane).
struct VectorStoreOp {
  std::int32_t output = 0;  // Plan::outputs index (not to_smem)
  ArraySlice slice;         // (not to_smem)
  // Into SMEM instead (st.shared, a generic-proxy write): the ref's first byte in the CTA's SMEM.
  bool to_smem = false;
  std::int64_t smem_offset = 0;
  std::int32_t smem_rank = -1;  // to_smem: a DSMEM write's peer CTA (-1: the CTA's own SMEM)
  std::int32_t places = -1;     // to_smem into a transformed ref: Plan::smem_places index
  // Into a register instead (a loop carry's init or next, no memory): Plan::registers index.
  std::int32_t to_register = -1;
  DType dtype = DType::kFloat32;  // of the destination (and of every node outside a convert)
  std::int64_t elements = 0;
  std::int32_t first_node = 0;  // Plan::vector_nodes: [first_node, first_node + num_nodes)
  std::int32_t num_nodes = 0;
};

// cp.async.bulk.wait_group(.read) n: the thread's committed store groups but the n most recent
// finish (reading SMEM only, with read_only).
struct StoreWaitOp {
  std::int64_t n = 0;
  bool read_only = false;
};

// Arrivals from the lanes of one warpgroup on a CTA-local mbarrier, each with an expect_tx
// (mbarrier.arrive.expect_tx; tx 0 is a plain arrive). Lane 0 expects `tx_lane0` bytes, lanes
// 1..lanes-1 expect `tx_other` bytes each.
struct ArriveOp {
  std::int32_t mbarrier = 0;
  std::int32_t record = 0;
  std::int32_t lanes = kWarpgroupLanes;
  std::int32_t count_per_lane = 1;
  std::int64_t tx_lane0 = 0;
  std::int64_t tx_other = 0;
};

// ClusterBarrier arrive: lane 8j of the warpgroup arrives once (mapa + mbarrier.arrive
// .shared::cluster) on mbarrier `mbarrier` of CTA j, for every bit j set in `mask`.
struct RemoteArriveOp {
  std::int32_t mbarrier = 0;
  std::int32_t record = 0;
  std::uint32_t mask = 0;
};

// mbarrier.complete_tx on a CTA-local mbarrier (the bulk path's UNDEFINED clamp remainder).
struct CompleteTxOp {
  std::int32_t mbarrier = 0;
  std::int32_t record = 0;
  std::int64_t bytes = 0;
};

// clusterlaunchcontrol.try_cancel.async ... .multicast::cluster::all.b128 (try_cluster_cancel):
// the 16-byte response lands at `result_offset` of every CTA of the cluster, each write signalled
// by a complete_tx of 16 bytes on that CTA's mbarrier `mbarrier`. The response is the grid
// scheduler's (whether a pending cluster was cancelled): undefined contents.
struct ClusterCancelOp {
  std::int32_t mbarrier = 0;
  std::int32_t record = 0;
  std::int64_t result_offset = 0;
};

// mbarrier.try_wait.parity: waits for the phase of parity `phase & 1`; `phase` counts the waits
// this thread made on this mbarrier before (the per-thread `phases` register of Mosaic GPU).
struct WaitOp {
  std::int32_t mbarrier = 0;
  std::int32_t record = 0;
  std::int64_t phase = 0;
};

// bar.sync 0 over every warpgroup of the CTA (gpu.barrier()). `phase` counts the block syncs of
// explicit run_scopeds this thread reached before; the kernel's own entry sync is unrecorded.
struct BlockSyncOp {
  bool recorded = true;
  std::int64_t phase = 0;
};

enum class StepKind : std::uint8_t {
  kScopeEnter,     // a run_scoped's allocations come alive (records are opened)
  kScopeExit,      // a run_scoped ends: its SMEM buffers are read back
  kBlockSync,      // BlockSyncOp
  kArrive,         // ArriveOp
  kRemoteArrive,   // RemoteArriveOp
  kCompleteTx,     // CompleteTxOp
  kLoad,           // LoadOp
  kStore,          // StoreOp
  kWait,           // WaitOp
  kStoreCommit,    // cp.async.bulk.commit_group (no table)
  kStoreWait,      // StoreWaitOp
  kVectorStore,    // VectorStoreOp
  kCommitSmem,     // fence.proxy.async.shared::cta (no table)
  kClusterCancel,  // ClusterCancelOp
  // A warp_map's entry (no instruction): whether some order of its warps makes a copy's
  // no-complete arrival complete a phase (WarpArrivalCheckOp; undefined behaviour
  // run.mbarrier.nocomplete_completes). The device runs nothing for it.
  kWarpArrivalCheck,
};

// The arrivals the warps of one warp_map make on each barrier, in each warp's program order
// (tags: Plan::strings indices of the ops), for the check at its entry.
struct WarpArrivalCheckOp {
  struct OnBarrier {
    std::int32_t mbarrier = 0;
    std::int32_t record = 0;
    std::vector<std::vector<WarpArrival>> warps;
  };
  std::vector<OnBarrier> barriers;
};

struct Step {
  StepKind kind = StepKind::kWait;
  std::int32_t op = -1;    // Plan::strings index of the op's JSON path; -1 for none
  std::int32_t index = 0;  // index into the table of `kind` (scopes for kScopeEnter/kScopeExit)
};

// The straight-line program of one Pallas thread: `when` guards, predicates and every
// axis_index are already evaluated for this CTA and thread.
struct ThreadProgram {
  std::int64_t cta = 0;
  std::int64_t thread = 0;
  std::int64_t first_step = 0;
  std::int64_t num_steps = 0;
};

// An mbarrier of the kernel: its SMEM offset and its hardware arrival count.
struct MbarrierInit {
  std::int64_t smem_offset = 0;
  std::int64_t arrival_count = 1;
};

// What the outcome reports per (allocation, index): the events addressed to it.
struct BarrierRecordInfo {
  std::int32_t alloc = 0;  // Plan::strings index of the allocation's name
  std::int64_t index = 0;
  std::int32_t mbarrier = 0;
  std::int64_t unit = 1;  // hardware arrivals per reported arrival (128, or 1)
};

struct BufferInfo {
  std::int32_t alloc = 0;  // Plan::strings index
  std::int64_t smem_offset = 0;
  std::int64_t bytes = 0;  // packed logical size
};

// The allocations of one run_scoped that the outcome reports.
struct ScopeInfo {
  std::int32_t owners =
      1;  // the exits that end it: every Pallas thread for a thread-collective one
  std::int32_t first_record = 0;
  std::int32_t num_records = 0;
  std::int32_t first_buffer = 0;
  std::int32_t num_buffers = 0;
};

struct Plan {
  // The cluster: CUDA dims (x, y, z), CTAs in rank order, Pallas coordinates per CTA.
  std::int64_t cluster[3] = {1, 1, 1};
  std::int64_t num_ctas = 1;
  std::int64_t threads_per_cta = 1;  // Pallas threads (warpgroups) per CTA
  std::vector<std::vector<std::int64_t>> cta_coords;

  // Dynamic SMEM: the scratch stack [0, smem_scratch_bytes), then the mbarriers.
  std::int64_t smem_scratch_bytes = 0;
  std::int64_t smem_bytes = 0;
  std::vector<MbarrierInit> mbarriers;
  bool cluster_sync_after_init = false;  // barrier.cluster.arrive/wait after mbarrier init

  std::vector<ThreadProgram> threads;  // CTA rank major, then thread
  std::vector<Step> steps;
  std::vector<ArriveOp> arrives;
  std::vector<RemoteArriveOp> remote_arrives;
  std::vector<CompleteTxOp> complete_txs;
  std::vector<ClusterCancelOp> cluster_cancels;
  std::vector<LoadOp> loads;
  std::vector<StoreOp> stores;
  std::vector<StoreWaitOp> store_waits;
  std::vector<VectorStoreOp> vector_stores;
  std::vector<VectorNode> vector_nodes;
  // Transformed SMEM refs of vector loads and stores: element j's byte offset from the ref's first
  // byte, the tiling and the swizzle (of the absolute SMEM address) applied.
  std::vector<std::vector<std::int64_t>> smem_places;
  // The registers of loop-carried values, one per thread and carry: each one's element count.
  std::vector<std::int64_t> registers;
  std::vector<WaitOp> waits;
  std::vector<BlockSyncOp> block_syncs;
  std::vector<WarpArrivalCheckOp> warp_checks;

  std::vector<BarrierRecordInfo> barrier_records;
  std::vector<BufferInfo> buffers;
  std::vector<ScopeInfo> scopes;
  std::vector<std::int32_t> scope_records;  // ScopeInfo ranges index these
  std::vector<std::int32_t> scope_buffers;

  std::vector<ArraySpec> inputs;
  std::vector<ArraySpec> outputs;
  std::vector<std::string> strings;  // allocation names and op paths
};

}  // namespace collfuzz::lowering
