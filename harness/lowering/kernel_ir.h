// The kernel as the lowering rules emit it: one static instruction stream for every CTA and
// thread, with `when` guards, predicates and axis indices still unevaluated (they are runtime
// values in the compiled kernel). build_plan evaluates it for each CTA and thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/smem_layout.h"
#include "harness/lowering/async_copy.h"

namespace collfuzz::lowering {

// A barrier operand: the group the allocation reserved from its pool, and the barrier in it.
struct IrBarrier {
  const Alloc* alloc = nullptr;
  std::int32_t group = 0;  // ModuleLayout::groups index
  std::int64_t index = 0;
  std::int32_t record = 0;  // Plan::barrier_records index of (alloc, index)
  // `bars.at[i % 2]`: the barrier is the slot's value on each trip (index 0 and record stand for
  // the array's first barrier; its records are consecutive).
  const DynStart* slot = nullptr;
};

// A copy's slice of its SMEM ref, `ref.at[..., pl.ds(start, size)]`: the plan builder adds
// start * stride bytes per CTA, the start rounded up to `tile` (UntilingTransform divides a
// dynamic start into a tiled dim by the tile, rounding up).
struct SmemSliceIr {
  const IndexEntry* entry = nullptr;  // none: no slice
  std::int64_t stride = 0;            // bytes per index of the sliced dim
  std::int64_t tile = 0;              // the sliced dim's tile; 0: not tiled
};

struct IrCopy {
  const Op* op = nullptr;
  const CopyGmemToSmem* copy = nullptr;
  const ArraySpec* src = nullptr;
  std::int32_t input = 0;
  std::int64_t smem_offset = 0;  // bytes: where dst.at[...] starts in SMEM
  std::int64_t slot_stride = 0;  // bytes: dst.at[slot]'s step per slot value (dst_slot)
  SmemSliceIr slice;             // dst.at[..., pl.ds(start, size)]
  SmemTransforms transforms;     // of dst's allocation
  const Alloc* smem = nullptr;   // dst's allocation
  Shape dst_shape;
  bool cp_async = false;
  std::optional<IrBarrier> barrier;
  std::vector<int> collective;  // resolved CUDA dims; empty for None and ()
  bool leader_tracked =
      false;               // is_leader_tracked_copy: collective non-empty and leader_tracked set
  std::int64_t bytes = 0;  // what the barrier is armed with (doubled when leader-tracked)
  OobMode oob_mode = OobMode::kZeros;
  std::optional<AsyncCopyShape> shape;  // set by LaunchContext.async_copy (lower or dialect stage)
};

struct IrStore {
  const Op* op = nullptr;
  const CopySmemToGmem* copy = nullptr;
  std::int32_t output = 0;
  std::int64_t smem_offset = 0;
  std::int64_t slot_stride = 0;  // bytes: src.at[slot]'s step per slot value (src_slot)
  SmemSliceIr slice;             // src.at[..., pl.ds(start, size)]
  SmemTransforms transforms;     // of src's allocation
  const Alloc* smem = nullptr;   // src's allocation
  const ArraySpec* dst = nullptr;
  Shape src_shape;
  std::optional<AsyncCopyShape> shape;
};

// vector_store: the SMEM bytes each SMEM load of its value starts at (depth first), and the
// step of a loop slot there.
// An error a later stage raises, found while the value's equations were walked.
struct IrError {
  std::string exception;
  std::string message;
  std::string_view rule;
};

struct IrVectorStore {
  const Op* op = nullptr;
  const VectorStore* store = nullptr;  // null for a loop carry's value
  const VectorValue* value = nullptr;  // the store's value, or the carry's init or next
  // A loop carry's init or next (op a Loop): the value goes to the thread's register of that
  // carry instead of memory.
  std::string carry;
  bool carry_next = false;  // the carry's next (else its init)
  std::int32_t output = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> smem_loads;  // (offset, slot stride)
  // Per SMEM load, and of an SMEM destination: the ref's layout (identity() unless transformed).
  std::vector<SmemLayout> smem_load_layouts;
  SmemLayout dst_layout;
  std::int64_t dst_smem_offset = 0;  // to_smem: the destination ref's first byte
  std::int64_t dst_slot_stride = 0;
  bool eight_bit = false;  // its value computes on 8-bit elements (lower.vector.pointwise_8bit)
  // The MLIR type of its value's first load of a peer CTA's SMEM through an indexed ref (a
  // cluster_ref of `smem.at[k]`, which Warpgroup's dialect lowering of 0.11.2 refuses); empty if
  // none.
  std::string indexed_cluster_memref;
  DType dtype = DType::kFloat32;
  std::int64_t elements = 0;
  // Its value has a layout of its own: it reads a ref or holds an iota (Warpgroup: the layout
  // inference of a count that is no multiple of 128 fails on one that reads a ref; a value of
  // constants is a splat).
  bool own_layout = false;
  // Its value broadcasts one of its own layout along dims other than new leading ones, which
  // Warpgroup's layout inference finds no layout for (dialect.vector.broadcast_layout).
  bool broadcast_unlaid = false;
  // Its value holds an iota with no layout cast whose own count is no multiple of 128, which
  // Warpgroup's layout inference lays out as a load and finds no layout for
  // (dialect.vector.layout_inference).
  bool iota_unlaid = false;
  Shape shape;  // the stored view's
  // JAX 0.11.2's splat store of a value of constants cannot lay it out
  // (lower.vector.splat_vec_size)
  std::optional<std::string> splat_vec_size_error = std::nullopt;
  // Warpgroup: its value meets the WGMMA layout (it loads a tiled and swizzled SMEM ref, or is
  // stored into one), and whether the layout inference finds that layout for every transformed
  // ref it meets (a tiling and a swizzle, rows in 64s).
  bool wgmma = false;
  bool wgmma_unlaid = false;
  // Warpgroup: the dialect lowering's first error in the WGMMA value's ops (jaxpr order): a GMEM
  // load, an indexed peer load, 8-bit arithmetic; then the store's into GMEM (0.12.0.1's plan).
  std::optional<IrError> wgmma_value_error = std::nullopt;
  std::optional<IrError> wgmma_store_error = std::nullopt;
};

inline constexpr const char* kPointwise8BitMessage =
    "Pointwise operations on 8-bit types are unsupported (except bitwise operations). Upcast to "
    "a 16- or 32-bit type before performing the operation.";
inline constexpr const char* kLayoutInferenceMessage =
    "Failed to infer a possible set of layouts. This should only happen if user-provided layout "
    "casts are unsatisfiable. To dump the constraint system for debugging, use "
    "`MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`.";
inline constexpr const char* kSplatStoreCountMessage =
    "Arrays with the splat layout can only be stored when they have a single element or a "
    "multiple of 128 elements";

struct IrBarrierOp {
  IrBarrier barrier;
  bool cluster = false;
  bool orders_tensor_core = false;
};

// plgpu.try_cluster_cancel: the arrival on `barrier` and the request whose response lands at
// `result_offset` of every CTA.
struct IrClusterCancel {
  IrBarrier barrier;
  const Alloc* result = nullptr;
  std::int64_t result_offset = 0;
  const TryClusterCancel* op = nullptr;
};

struct IrScope {
  std::int32_t owners = 1;            // threads whose exits end a thread-collective allocation
  std::vector<std::int32_t> records;  // Plan::barrier_records
  std::vector<std::int32_t> buffers;  // Plan::buffers
};

enum class IrKind : std::uint8_t {
  kScopeEnter,
  kScopeExit,
  kBlockSync,   // gpu.barrier(); `recorded` false for the kernel's own run_scoped
  kGuardBegin,  // scf.if on `cond`
  kGuardEnd,
  kLoopBegin,  // scf.for with a static trip count (`trip_count`)
  kLoopEnd,
  kCopy,
  kStore,
  kArrive,
  kWait,
  kStoreCommit,    // cp.async.bulk.commit_group
  kStoreWait,      // cp.async.bulk.wait_group(.read) n; the op is a WaitSmemToGmem
  kVectorStore,    // a vector store (KernelIr::vector_stores)
  kCommitSmem,     // fence.proxy.async.shared::cta
  kClusterCancel,  // try_cluster_cancel (KernelIr::cluster_cancels)
};

struct IrOp {
  IrKind kind = IrKind::kGuardEnd;
  const Op* op = nullptr;
  std::int32_t index = 0;  // into the table of `kind`
  const Cond* cond = nullptr;
  bool recorded = true;
  std::int64_t trip_count = 0;  // kLoopBegin
};

struct KernelIr {
  std::vector<IrOp> ops;
  std::vector<IrCopy> copies;
  std::vector<IrStore> stores;
  std::vector<IrVectorStore> vector_stores;
  std::vector<IrBarrierOp> barrier_ops;
  std::vector<IrClusterCancel> cluster_cancels;
  std::vector<IrScope> scopes;
  // What the plan reports, collected while lowering.
  std::vector<std::pair<const Alloc*, std::int64_t>> records;  // (allocation, index)
  std::vector<std::int32_t> record_groups;                     // group of each record
  struct Buffer {
    const Alloc* alloc = nullptr;
    std::int64_t smem_offset = 0;
  };
  std::vector<Buffer> buffers;
  // For the compile stage.
  bool uses_acc = false;
  bool uses_cta_group2 = false;
  bool uses_orders_tensor_core = false;
};

}  // namespace collfuzz::lowering
