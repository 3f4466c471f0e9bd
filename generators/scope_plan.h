// A generated run_scoped with what happens inside it, before names are given. program_builder
// turns it into ops, deriving the barrier's arrival count from the copies and arrivals that the
// plan issues on it, so that most generated kernels balance and a chosen few do not.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "generators/copy_plan.h"
#include "generators/nd_loop_shape.h"
#include "generators/vector_back.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// The collective_axes of a run_scoped, relative to the mesh.
enum class ScopeAxes : std::uint8_t {
  kValid,             // (thread_name,) in a multithreaded kernel, () otherwise
  kEmpty,             // ()
  kCluster,           // a cluster axis
  kClusterAndThread,  // a cluster axis and the thread axis
  kGrid,              // a grid axis
  kUnknown,           // a name the mesh does not declare
  kThreadTwice,       // (thread_name, thread_name)
  kThread,            // (thread_name,) whether or not the kernel is multithreaded
};

// Which Pallas threads of a CTA issue the scope's copies and arrivals.
enum class Issuers : std::uint8_t { kAllThreads, kThreadZero };

enum class WaitChoice : std::uint8_t {
  kAll,         // every thread waits
  kLeaderOnly,  // only CTAs at index 0 of the first cluster axis wait
  kNone,
  kTwice,  // two waits in a row (the second waits for a phase nobody completes)
};

// How a write-back's stores complete (store groups: copy_smem_to_gmem's commit_group,
// commit_smem_to_gmem_group, wait_smem_to_gmem). In a loop the next trip's copy overwrites the
// stored buffer, so a store its wait does not retire races with it.
enum class StoreSync : std::uint8_t {
  kIdiom,           // commit_smem(); copy_smem_to_gmem(...); wait_smem_to_gmem(0)
  kWaitZero,        // no wait of its own; wait_smem_to_gmem(0) after the stores
  kWaitOne,         // wait_smem_to_gmem(1): the latest store stays in flight (a pipeline's)
  kNoWait,          // nothing waits: the stores complete by the end of the kernel
  kCommitLater,     // commit_group=False, then commit_smem_to_gmem_group() and a wait(0)
  kNeverCommitted,  // commit_group=False and a wait(0) that no committed group covers
  kNegativeWait,    // wait_smem_to_gmem(-1): JAX's trace error
};

// The order of the scope's copies and waits on its barrier.
enum class Schedule : std::uint8_t {
  kBatch,           // every copy, then the waits (one phase)
  kPhased,          // copy, wait, copy, wait, ... (one phase per copy)
  kCopyWaitCopy,    // C W C: a second phase nobody observes
  kMissedPhase,     // C W C C C: phases that complete while the waiter is away
  kWaitLate,        // C W C C W: a wait for a phase already passed
  kTwoBeforeAWait,  // C C W: the first wait comes after two phases
};

// Whether the copies and arrivals of a batch are issued from a warp-level context
// (pl.core_map(plgpu.WarpMesh), under either lowering semantics): by warp 0 alone (as a warpgroup
// issues them), or by every warp (each issues them: 4 times the arrivals and bytes). The mistakes:
// a warp_map nested in the warp_map, or an (empty) run_scoped inside it. Who issues the copies: the
// warpgroup, warp 0 of a warp_map, every warp of it (num_arrivals counting each warp's copies), a
// nested warp_map, a run_scoped inside one, or every warp with num_arrivals counted as if one warp
// copied (JAX: "The arrival counts are wrong if called outside of a single warp"; the warps'
// no-complete arrivals may complete the phase: run.mbarrier.nocomplete_completes).
enum class WarpIssue : std::uint8_t {
  kWarpgroup,
  kOneWarp,
  kEveryWarp,
  kNested,
  kScopedInside,
  kEveryWarpCountedOnce,
};

// The arrival count relative to what the plan issues per CTA.
enum class ArrivalFault : std::uint8_t { kNone, kOneMore, kOneFewer, kZero, kNegative };

// The collective_axes of a ClusterBarrier, relative to the mesh.
enum class ClusterBarrierAxes : std::uint8_t {
  kAll,       // every cluster axis, in declaration order
  kFirst,     // the first cluster axis
  kGrouped,   // the first two cluster axes as one group (a tuple)
  kUnknown,   // a name the mesh does not declare
  kThread,    // the thread axis
  kReversed,  // every cluster axis, reversed
};

struct ClusterSyncPlan {
  ClusterBarrierAxes axes = ClusterBarrierAxes::kAll;
  bool leader_tracked = false;
  std::int64_t num_arrivals = 1;
  std::int64_t num_barriers = 1;
  bool unindexed = false;       // arrive on the ref without .at[0]
  bool zero_d = false;          // num_barriers=() (JAX's default) when num_barriers is 1: a 0-d ref
  bool arrive_in_warp = false;  // the arrival from warp 0 of a warp_map (JAX refuses it)
  bool orders_tensor_core = false;
  WaitChoice wait = WaitChoice::kAll;
  // The arrival and one wait as plgpu.barrier_arrive_and_wait (JAX 0.12.0.1; 0.11.2 has no such
  // function), where the arrival is not from a warp and every CTA waits once.
  bool arrive_and_wait = false;
};

// plgpu.try_cluster_cancel at the end of a scope (cluster_cancel_gen.h): its result ref, the
// collective_axes that pick its issuers, and whether every thread waits for the response.
enum class CancelResult : std::uint8_t {
  kUint8x16,  // plgpu.SMEM((16,), jnp.uint8): what JAX's kernels use
  kInt8x16,
  kUint32x4,  // 128 bits: Lane takes it, Warpgroup's verifier does not (a JAX bug)
  kUint8x8,   // 64 bits: lower.try_cluster_cancel.result_bits
  kRowOfTwo,  // plgpu.TryClusterCancelResult(2) (int8[2, 16]) used as res.at[1]
};
enum class CancelAxes : std::uint8_t {
  kCluster,           // every cluster axis: one issuer per cluster
  kThreadAndCluster,  // and the thread axis: one issuing warpgroup
  kNone,              // (): every CTA issues, every CTA receives one response per CTA
  kFirstClusterAxis,  // the first cluster axis only: one issuer per line of the others
  kThread,            // the thread axis only: every CTA's first warpgroup issues
};
struct ClusterCancelPlan {
  CancelResult result = CancelResult::kUint8x16;
  CancelAxes axes = CancelAxes::kCluster;
  bool wait = true;
};

// An allocation that the copies do not use, to reach the rules of other allocation kinds.
struct ExtraAlloc {
  AllocKind kind = AllocKind::kAcc;
  Shape shape;
  DType dtype = DType::kFloat32;
  bool collective = false;  // tmem
  bool paired = false;      // tmem: and a second one, collective where this one is not
  SemaphoreKind semaphore = SemaphoreKind::kRegular;
  std::int64_t num_barriers = 1;  // barrier
  bool own_scope = false;         // in a sibling run_scoped of its own
  ScopeAxes own_scope_axes = ScopeAxes::kValid;
};

struct ScopePlan {
  ScopeAxes axes = ScopeAxes::kValid;
  Issuers issuers = Issuers::kAllThreads;
  Schedule schedule = Schedule::kBatch;
  std::vector<CopyPlan> copies;  // all on the scope's barrier
  std::int64_t extra_arrivals = 0;
  ArrivalFault arrival_fault = ArrivalFault::kNone;
  std::int64_t num_barriers = 1;
  bool zero_d = false;  // num_barriers=() (JAX's default) when num_barriers is 1: a 0-d ref
  WarpIssue warp_issue = WarpIssue::kWarpgroup;
  bool orders_tensor_core = false;
  WaitChoice wait = WaitChoice::kAll;
  bool write_back = false;  // copy the first destination to an output after the wait
  // With a write-back: a second store of the same tile after it, with this reduction_op (the
  // output then holds op(tile, tile) where the dtype allows the op; JAX refuses it otherwise).
  std::optional<ReductionOp> reduce_back;
  // With a write-back: `predicate=` on its stores (resolved against the mesh's axes).
  std::optional<CondChoice> write_back_predicate;
  // With a write-back: how its stores complete, and whether its waits wait only for the reads.
  StoreSync store_sync = StoreSync::kIdiom;
  bool store_wait_read_only = false;
  // With a write-back: a vector store in it (vector_back.h).
  std::optional<VectorBackPlan> vector_back;
  // > 0: the copies, arrivals and waits run in a loop of this many trips, on the same barrier
  // (its phases carried from one trip to the next: a pipeline reusing its barrier).
  std::int64_t loop_trips = 0;
  // With a loop: its index picks the tile (`lambda i, carry`): each copy's source grows a tile per
  // trip and reads `pl.ds(i * rows, rows)`, and the write-back (inside the loop) stores to
  // `out.at[i]`.
  bool loop_indexed = false;
  // With an indexed loop: double buffering. The scope's barrier array has 2 or more barriers and
  // every use in the loop is `bars.at[i % 2]`; a copy into a 2-slot destination writes
  // `dst.at[i % 2]` (and the write-back reads it).
  bool loop_slots = false;
  // With an indexed loop and an axis of the mesh that varies: a plgpu.nd_loop instead, its grid
  // index picking the tile (nd_loop_shape.h).
  std::optional<NdLoopPlan> nd_loop;
  std::optional<ClusterSyncPlan> cluster_sync;
  std::optional<ClusterCancelPlan> cluster_cancel;
  std::vector<ExtraAlloc> extras;
  std::vector<ScopePlan> nested;  // run_scopeds inside this one
};

// A whole kernel body: sibling run_scopeds at the top level.
struct ProgramPlan {
  std::vector<ScopePlan> scopes;
};

}  // namespace collfuzz::generators
