// The device tables of the CUDA executor: a lowering::Plan re-encoded as fixed-size records that
// the precompiled interpreter kernel (gpu/interpreter_kernel.cu) reads from device memory. One
// launch runs a batch of cases with the same cluster shape, one cluster per case; every index and
// offset in a case's records is relative to that case's bases in its DevCase, so a case encodes
// the same bytes whatever batch it lands in. Shared by the host (encoder, CPU emulator, decoder)
// and the device; docs/cuda-executor.md describes the layout.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define COLLFUZZ_HOST_DEVICE __host__ __device__
#else
#define COLLFUZZ_HOST_DEVICE
#endif

namespace collfuzz::gpu {

inline constexpr std::uint32_t kLanes = 128;           // CUDA threads per Pallas thread
inline constexpr std::uint32_t kMaxWarpgroups = 8;     // 1024 threads per CTA
inline constexpr std::uint32_t kMaxClusterCtas = 16;   // 16-bit multicast masks
inline constexpr std::uint32_t kTensorMapBytes = 128;  // sizeof(CUtensorMap), 64-byte aligned
inline constexpr std::uint32_t kMaxTxPerOp = (1u << 20) - 1;  // mbarrier tx-count range
inline constexpr std::uint32_t kMaxArrivalCount = (1u << 20) - 1;
inline constexpr int kMaxTensorRank = 5;
inline constexpr int kMaxStoreRank = 8;

enum DevOpKind : std::uint8_t {
  kOpScopeEnter = 0,  // a = scope (per-CTA index)
  kOpScopeExit,       // a = scope
  kOpBlockSync,       // slot = wait result index, or kNoSlot for an unrecorded sync
  kOpArrive,          // lanes [0, a) arrive with count b; lane 0 expects tx_lo(c), others tx_hi(c)
  kOpRemoteArrive,    // lane 8j arrives (mapa) on the mbarrier of CTA j, for every bit j of mask
  kOpCompleteTx,      // mbarrier.complete_tx of c bytes on the local mbarrier
  kOpLoadTensor,      // lane 0: cp.async.bulk.tensor of tensor map a into SMEM b at coords
  kOpLoadBulk,        // lane 0: cp.async.bulk of a bytes from input `slot` at byte offset c into b
  kOpStore,           // the warpgroup copies SMEM into an output slice: store a
  kOpWait,            // every lane: bounded mbarrier.try_wait.parity(a); result in `slot`
};

enum DevStepFlags : std::uint8_t {
  kFlagPredicate = 1,  // loads: the predicate is true (false: nothing is issued)
  kFlagMulticast = 2,  // loads: .multicast::cluster with `mask`
  kFlagLeader = 4,     // loads: .cta_group::2, complete_tx on the mbarrier of CTA `c` (the leader
                       // of the issuer's pair: rank 0 of a 2-CTA cluster)
};
inline constexpr int kFlagRankShift = 4;  // tensor loads: the tensor rank (1..5) in bits 4..6
COLLFUZZ_HOST_DEVICE inline constexpr std::uint8_t tensor_rank(std::uint8_t flags) {
  return (flags >> kFlagRankShift) & 7;
}

inline constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;

// One step of one warpgroup's straight-line program (48 bytes).
struct DevStep {
  std::uint8_t kind = kOpWait;
  std::uint8_t flags = 0;
  std::uint16_t mask = 0;
  std::uint32_t mbar = 0;  // SMEM byte offset of the mbarrier (CTA-local)
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t slot = kNoSlot;
  std::int32_t coords[kMaxTensorRank] = {};  // tensor loads: innermost first
  std::uint64_t c = 0;
};

COLLFUZZ_HOST_DEVICE inline constexpr std::uint64_t pack_tx(std::uint32_t lane0,
                                                            std::uint32_t others) {
  return static_cast<std::uint64_t>(lane0) | (static_cast<std::uint64_t>(others) << 32);
}
COLLFUZZ_HOST_DEVICE inline constexpr std::uint32_t tx_lane0(std::uint64_t c) {
  return static_cast<std::uint32_t>(c);
}
COLLFUZZ_HOST_DEVICE inline constexpr std::uint32_t tx_others(std::uint64_t c) {
  return static_cast<std::uint32_t>(c >> 32);
}

// The program of one warpgroup of one CTA: steps [first_step, first_step + num_steps) of its case.
struct DevThread {
  std::uint32_t first_step = 0;
  std::uint32_t num_steps = 0;
};

struct DevMbar {
  std::uint32_t smem_offset = 0;
  std::uint32_t count = 1;  // hardware arrival count
};

// A run_scoped's SMEM buffers in one CTA: buffers [first_buffer, first_buffer + num_buffers).
struct DevScope {
  std::uint32_t first_buffer = 0;
  std::uint32_t num_buffers = 0;
};

// One SMEM buffer of one CTA and where its read-back goes (offsets into the case's results).
struct DevBuffer {
  std::uint32_t smem_offset = 0;
  std::uint32_t bytes = 0;
  std::uint64_t result_offset = 0;  // the bytes, 16-byte aligned
  std::uint64_t flag_offset = 0;    // a uint32: nonzero once a read-back happened
};

// A copy_smem_to_gmem: `elements` packed elements from SMEM into a slice of an output.
struct DevStore {
  std::uint32_t smem_offset = 0;
  std::uint32_t elem_bits = 32;
  std::uint64_t elements = 0;
  std::uint64_t output_offset = 0;   // the output's bytes in the case's results
  std::uint64_t written_offset = 0;  // one byte per output element: 1 once written
  std::int32_t rank = 0;
  std::int32_t pad = 0;
  std::int64_t dims[kMaxStoreRank] = {};
  std::int64_t start[kMaxStoreRank] = {};
  std::int64_t size[kMaxStoreRank] = {};  // 0: a squeezed dim at `start`
};

// Per-CTA control words in the results (global memory): the software block barrier and the
// scope reference counts. 16 bytes, then one uint32 per scope.
struct DevControl {
  std::uint32_t sync_state = 0;  // arrived | finished << 16
  std::uint32_t sync_generation = 0;
  std::uint32_t pad[2] = {};
};

enum DevWaitStatus : std::uint32_t {
  kWaitNotReached = 0,
  kWaitCompleted = 1,
  kWaitTimedOut = 2,
};

// The result of one wait (a barrier_wait or a recorded block sync), 16 bytes.
struct DevWaitResult {
  std::uint32_t status = kWaitNotReached;
  std::uint32_t elapsed_us = 0;     // how long the wait took (saturated)
  std::uint64_t mbarrier_word = 0;  // a timed-out barrier wait: the raw mbarrier (opaque)
};

enum DevCaseStatusBits : std::uint32_t {
  kStatusRan = 1,               // the CTA of rank 0 started
  kStatusSmemMisaligned = 2,    // dynamic SMEM is not 128-byte aligned
  kStatusBadGeometry = 4,       // blockDim or the cluster does not match the case
  kStatusTimeout = 8,           // some wait ran out of time
  kStatusUnsupportedStep = 16,  // a step this build cannot execute (e.g. .cta_group::2 on sm_90a)
};

// The results of one case start with this (then control, waits, buffer flags and bytes,
// outputs and their written flags, at the offsets in DevCase).
struct DevCaseStatus {
  std::uint32_t bits = 0;
  std::uint32_t smem_base = 0;  // the shared-window address of dynamic SMEM (rank 0)
  std::uint32_t pad[2] = {};
};

// One case of a batch: its record ranges in the batch tables and its results layout.
struct DevCase {
  std::uint32_t num_ctas = 1;
  std::uint32_t threads_per_cta = 1;  // warpgroups
  std::uint32_t step_base = 0;
  std::uint32_t thread_base = 0;  // DevThread of (rank r, warpgroup w) = thread_base + r*T + w
  std::uint32_t mbar_base = 0;
  std::uint32_t num_mbars = 0;
  std::uint32_t scope_base = 0;  // DevScope of (rank r, scope s) = scope_base + r*num_scopes + s
  std::uint32_t num_scopes = 0;
  std::uint32_t buffer_base = 0;  // DevScope::first_buffer is relative to this
  std::uint32_t store_base = 0;
  std::uint32_t tmap_base = 0;  // tensor map i of the case: tmaps[tmap_base + i]
  std::uint32_t input_base =
      0;  // input i of the case starts at inputs + input_offsets[input_base + i]
  std::uint32_t smem_scratch = 0;  // bytes pre-filled with the sentinel
  std::uint32_t smem_bytes = 0;
  std::uint64_t results_base = 0;    // byte offset of the case's results in the results arena
  std::uint64_t control_offset = 0;  // relative to results_base; per CTA, control_stride apart
  std::uint64_t control_stride = 0;
  std::uint64_t waits_offset = 0;  // DevWaitResult array
};

// Offsets of the tables in the batch image (bytes from its start).
struct DevTables {
  std::uint64_t cases = 0;
  std::uint64_t threads = 0;
  std::uint64_t steps = 0;
  std::uint64_t mbars = 0;
  std::uint64_t scopes = 0;
  std::uint64_t buffers = 0;
  std::uint64_t stores = 0;
  std::uint64_t input_offsets = 0;  // uint64 per (case, input)
  std::uint64_t tmaps = 0;          // kTensorMapBytes per map, 64-byte aligned
  std::uint64_t bytes = 0;          // total size of the image
};

// The kernel's parameters.
struct DevLaunch {
  const std::uint8_t* tables = nullptr;
  DevTables layout;
  const std::uint8_t* inputs = nullptr;  // the input arena
  std::uint8_t* results = nullptr;       // the results arena (zeroed before the launch)
  std::uint64_t timeout_ns = 100'000'000;
  std::uint64_t grace_ns = 5'000;
  std::uint32_t num_cases = 0;
  std::uint32_t pad = 0;
};

}  // namespace collfuzz::gpu
