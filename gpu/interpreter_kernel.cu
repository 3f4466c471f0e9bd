// The CUDA executor's one precompiled kernel: it interprets the device tables of a batch
// (gpu/device_plan.h), one cluster per case, every warpgroup of every CTA running its own
// straight-line program. What it does, in order, per CTA:
//   1. fill the SMEM scratch with the sentinel 0xA5, initialise the plan's mbarriers
//      (mbarrier.init, fence.mbarrier_init.release.cluster), fence.proxy.async, cluster barrier;
//   2. run the program: arrive.expect_tx per lane, remote arrivals (mapa), complete_tx, TMA loads
//      (cp.async.bulk.tensor with the plan's 16-bit multicast mask, or cp.async.bulk), parity
//      waits bounded by %globaltimer, software block syncs bounded the same way, stores, and SMEM
//      read-backs at scope entry and exit; a wait that runs out of time is recorded and the
//      warpgroup stops (drains);
//   3. drain: cluster barrier (nobody issues anything after it), a short grace for copies in
//      flight, read-back of the scopes still alive, exit. Nothing waits without a bound, so a
//      wrong byte count never leaves the GPU hung.
// PTX follows the PTX ISA 8.x forms that CUTLASS's SM90/SM100 copy traits and cluster helpers
// use; written here for this interpreter.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/device_plan.h"
#include "gpu/kernel_launch.h"

namespace collfuzz::gpu {
namespace {

// ---- special registers and fences --------------------------------------------------------------

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ std::uint32_t cluster_nctarank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ std::uint32_t cluster_id_x() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}

// Not .aligned: lanes of a warp may reach it from different paths.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- warpgroup collectives (named barrier 1 + warpgroup, 128 threads)
// ----------------------------

__device__ __forceinline__ void wg_sync(std::uint32_t wg) {
  asm volatile("barrier.sync %0, 128;" ::"r"(wg + 1) : "memory");
}

__device__ __forceinline__ bool wg_all(std::uint32_t wg, bool v) {
  std::uint32_t out;
  asm volatile(
      "{\n\t.reg .pred pin, pout;\n\tsetp.ne.u32 pin, %1, 0;\n\t"
      "barrier.red.and.pred pout, %2, 128, pin;\n\tselp.u32 %0, 1, 0, pout;\n\t}"
      : "=r"(out)
      : "r"(static_cast<std::uint32_t>(v)), "r"(wg + 1)
      : "memory");
  return out != 0;
}

__device__ __forceinline__ bool wg_any(std::uint32_t wg, bool v) {
  std::uint32_t out;
  asm volatile(
      "{\n\t.reg .pred pin, pout;\n\tsetp.ne.u32 pin, %1, 0;\n\t"
      "barrier.red.or.pred pout, %2, 128, pin;\n\tselp.u32 %0, 1, 0, pout;\n\t}"
      : "=r"(out)
      : "r"(static_cast<std::uint32_t>(v)), "r"(wg + 1)
      : "memory");
  return out != 0;
}

// ---- mbarrier
// ------------------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(std::uint32_t addr, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(addr), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint32_t addr, std::uint32_t count) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(addr), "r"(count)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t addr, std::uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(addr),
               "r"(tx)
               : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(std::uint32_t addr, std::uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(addr), "r"(tx)
               : "memory");
}

__device__ __forceinline__ void mbar_complete_tx(std::uint32_t addr, std::uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(addr), "r"(tx)
               : "memory");
}

// mbarrier.arrive on the mbarrier at the same offset in CTA `rank` of the cluster.
__device__ __forceinline__ void mbar_remote_arrive(std::uint32_t addr, std::uint32_t rank) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n\t}" ::"r"(addr),
      "r"(rank)
      : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(std::uint32_t addr, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(addr), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ std::uint64_t mbar_word(std::uint32_t addr) {
  std::uint64_t w;
  asm volatile("ld.volatile.shared.b64 %0, [%1];" : "=l"(w) : "r"(addr) : "memory");
  return w;
}

// ---- TMA
// -----------------------------------------------------------------------------------------

__device__ __forceinline__ void tensormap_acquire(const void* tmap) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(tmap) : "memory");
}

#define COLLFUZZ_TMA_PREFIX "cp.async.bulk.tensor."
#define COLLFUZZ_TMA_LOAD ".shared::cluster.global.mbarrier::complete_tx::bytes"

__device__ __forceinline__ void tma_load(std::uint32_t dst, const void* tmap, const std::int32_t* c,
                                         std::uint32_t mbar, int rank) {
  const auto t = reinterpret_cast<std::uint64_t>(tmap);
  switch (rank) {
    case 1:
      asm volatile(COLLFUZZ_TMA_PREFIX "1d" COLLFUZZ_TMA_LOAD " [%0], [%1, {%2}], [%3];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(mbar)
                   : "memory");
      break;
    case 2:
      asm volatile(COLLFUZZ_TMA_PREFIX "2d" COLLFUZZ_TMA_LOAD
                                       " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(mbar)
                   : "memory");
      break;
    case 3:
      asm volatile(COLLFUZZ_TMA_PREFIX "3d" COLLFUZZ_TMA_LOAD
                                       " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar)
                   : "memory");
      break;
    case 4:
      asm volatile(COLLFUZZ_TMA_PREFIX "4d" COLLFUZZ_TMA_LOAD
                                       " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar)
                   : "memory");
      break;
    default:
      asm volatile(COLLFUZZ_TMA_PREFIX "5d" COLLFUZZ_TMA_LOAD
                                       " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mbar)
                   : "memory");
      break;
  }
}

// .multicast::cluster: the same box lands at `dst` and signals `mbar` (same offsets) in every CTA
// of the 16-bit mask.
__device__ __forceinline__ void tma_load_multicast(std::uint32_t dst, const void* tmap,
                                                   const std::int32_t* c, std::uint32_t mbar,
                                                   std::uint16_t mask, int rank) {
  const auto t = reinterpret_cast<std::uint64_t>(tmap);
  switch (rank) {
    case 1:
      asm volatile(COLLFUZZ_TMA_PREFIX "1d" COLLFUZZ_TMA_LOAD
                                       ".multicast::cluster [%0], [%1, {%2}], [%3], %4;" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(mbar), "h"(mask)
                   : "memory");
      break;
    case 2:
      asm volatile(COLLFUZZ_TMA_PREFIX
                   "2d" COLLFUZZ_TMA_LOAD
                   ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(mbar), "h"(mask)
                   : "memory");
      break;
    case 3:
      asm volatile(COLLFUZZ_TMA_PREFIX
                   "3d" COLLFUZZ_TMA_LOAD
                   ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar), "h"(mask)
                   : "memory");
      break;
    case 4:
      asm volatile(COLLFUZZ_TMA_PREFIX "4d" COLLFUZZ_TMA_LOAD
                                       ".multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], "
                                       "%7;" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar), "h"(mask)
                   : "memory");
      break;
    default:
      asm volatile(COLLFUZZ_TMA_PREFIX "5d" COLLFUZZ_TMA_LOAD
                                       ".multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], "
                                       "[%7], %8;" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mbar),
                   "h"(mask)
                   : "memory");
      break;
  }
}

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define COLLFUZZ_HAVE_CTA_GROUP_2 1
// The shared::cluster address of `addr` in CTA `rank`.
__device__ __forceinline__ std::uint32_t map_to_rank(std::uint32_t addr, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}

// .cta_group::2 (sm_100a): the completion goes to the mbarrier at `mbar_cluster`, a
// shared::cluster address in the leader (cluster rank 0).
__device__ __forceinline__ void tma_load_pair(std::uint32_t dst, const void* tmap,
                                              const std::int32_t* c, std::uint32_t mbar_cluster,
                                              bool multicast, std::uint16_t mask, int rank) {
  const auto t = reinterpret_cast<std::uint64_t>(tmap);
#define COLLFUZZ_PAIR ".cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
  if (multicast) {
    switch (rank) {
      case 1:
        asm volatile(COLLFUZZ_TMA_PREFIX
                     "1d" COLLFUZZ_PAIR
                     ".multicast::cluster [%0], [%1, {%2}], [%3], %4;" ::"r"(dst),
                     "l"(t), "r"(c[0]), "r"(mbar_cluster), "h"(mask)
                     : "memory");
        break;
      case 2:
        asm volatile(COLLFUZZ_TMA_PREFIX
                     "2d" COLLFUZZ_PAIR
                     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                     "l"(t), "r"(c[0]), "r"(c[1]), "r"(mbar_cluster), "h"(mask)
                     : "memory");
        break;
      case 3:
        asm volatile(COLLFUZZ_TMA_PREFIX "3d" COLLFUZZ_PAIR
                                         ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], "
                                         "%6;" ::"r"(dst),
                     "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar_cluster), "h"(mask)
                     : "memory");
        break;
      case 4:
        asm volatile(COLLFUZZ_TMA_PREFIX "4d" COLLFUZZ_PAIR
                                         ".multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], "
                                         "%7;" ::"r"(dst),
                     "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar_cluster),
                     "h"(mask)
                     : "memory");
        break;
      default:
        asm volatile(COLLFUZZ_TMA_PREFIX "5d" COLLFUZZ_PAIR
                                         ".multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], "
                                         "[%7], %8;" ::"r"(dst),
                     "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]),
                     "r"(mbar_cluster), "h"(mask)
                     : "memory");
        break;
    }
    return;
  }
  switch (rank) {
    case 1:
      asm volatile(COLLFUZZ_TMA_PREFIX "1d" COLLFUZZ_PAIR " [%0], [%1, {%2}], [%3];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(mbar_cluster)
                   : "memory");
      break;
    case 2:
      asm volatile(COLLFUZZ_TMA_PREFIX "2d" COLLFUZZ_PAIR " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(mbar_cluster)
                   : "memory");
      break;
    case 3:
      asm volatile(COLLFUZZ_TMA_PREFIX "3d" COLLFUZZ_PAIR
                                       " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar_cluster)
                   : "memory");
      break;
    case 4:
      asm volatile(COLLFUZZ_TMA_PREFIX "4d" COLLFUZZ_PAIR
                                       " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar_cluster)
                   : "memory");
      break;
    default:
      asm volatile(COLLFUZZ_TMA_PREFIX "5d" COLLFUZZ_PAIR
                                       " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst),
                   "l"(t), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mbar_cluster)
                   : "memory");
      break;
  }
#undef COLLFUZZ_PAIR
}
#endif

__device__ __forceinline__ void bulk_load(std::uint32_t dst, const void* src, std::uint32_t bytes,
                                          std::uint32_t mbar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(src)), "r"(bytes), "r"(mbar)
      : "memory");
}

// ---- the interpreter
// -----------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ const T& record(const DevLaunch& p, std::uint64_t table,
                                           std::uint64_t index) {
  return reinterpret_cast<const T*>(p.tables + table)[index];
}

struct Cta {
  const DevLaunch* p;
  DevCase c;
  std::uint8_t* results;  // the case's results
  unsigned char* smem;
  std::uint32_t smem_base;  // shared-window address of smem
  std::uint32_t rank;
  std::uint32_t wg;
  std::uint32_t lane;

  __device__ DevControl* control() const {
    return reinterpret_cast<DevControl*>(results + c.control_offset + rank * c.control_stride);
  }
  __device__ std::uint32_t* scope_live(std::uint32_t scope) const {
    return reinterpret_cast<std::uint32_t*>(results + c.control_offset + rank * c.control_stride +
                                            sizeof(DevControl)) +
           scope;
  }
  __device__ std::uint32_t* status() const { return reinterpret_cast<std::uint32_t*>(results); }
  __device__ DevWaitResult* wait_result(std::uint32_t slot) const {
    return reinterpret_cast<DevWaitResult*>(results + c.waits_offset) + slot;
  }
};

// The warpgroup copies the scope's buffers out of SMEM; every lane takes part.
__device__ void read_back(const Cta& k, std::uint32_t scope) {
  wg_sync(k.wg);
  const DevScope sc =
      record<DevScope>(*k.p, k.p->layout.scopes, k.c.scope_base + k.rank * k.c.num_scopes + scope);
  for (std::uint32_t n = 0; n < sc.num_buffers; ++n) {
    const DevBuffer b =
        record<DevBuffer>(*k.p, k.p->layout.buffers, k.c.buffer_base + sc.first_buffer + n);
    const unsigned char* src = k.smem + b.smem_offset;
    std::uint8_t* dst = k.results + b.result_offset;
    std::uint32_t done = 0;
    if (b.smem_offset % 16 == 0) {
      const std::uint32_t vectors = b.bytes / 16;
      for (std::uint32_t i = k.lane; i < vectors; i += kLanes) {
        reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
      }
      done = vectors * 16;
    }
    for (std::uint32_t i = done + k.lane; i < b.bytes; i += kLanes) dst[i] = src[i];
    if (k.lane == 0) *reinterpret_cast<volatile std::uint32_t*>(k.results + b.flag_offset) = 1;
  }
  wg_sync(k.wg);
}

__device__ std::uint64_t load_element(const unsigned char* base, std::uint32_t bits,
                                      std::uint64_t i) {
  switch (bits) {
    case 4:
      return (i & 1) ? (base[i >> 1] >> 4) : (base[i >> 1] & 0xF);
    case 8:
      return base[i];
    case 16:
      return static_cast<std::uint64_t>(base[2 * i]) |
             (static_cast<std::uint64_t>(base[2 * i + 1]) << 8);
    default: {
      std::uint64_t v = 0;
      const std::uint32_t n = bits / 8;
      for (std::uint32_t b = 0; b < n; ++b)
        v |= static_cast<std::uint64_t>(base[i * n + b]) << (8 * b);
      return v;
    }
  }
}

__device__ void store_element(std::uint8_t* base, std::uint32_t bits, std::uint64_t i,
                              std::uint64_t v) {
  if (bits == 4) {
    // Two elements share a byte and two lanes may write them: update the nibble atomically.
    const std::uint64_t byte = i >> 1;
    auto* word = reinterpret_cast<unsigned int*>(base + (byte & ~std::uint64_t{3}));
    const unsigned int shift = static_cast<unsigned int>((byte & 3) * 8 + (i & 1) * 4);
    atomicAnd(word, ~(0xFu << shift));
    atomicOr(word, static_cast<unsigned int>(v & 0xF) << shift);
    return;
  }
  const std::uint32_t n = bits / 8;
  for (std::uint32_t b = 0; b < n; ++b) base[i * n + b] = static_cast<std::uint8_t>(v >> (8 * b));
}

__device__ void store(const Cta& k, std::uint32_t index) {
  wg_sync(k.wg);
  const DevStore& s = record<DevStore>(*k.p, k.p->layout.stores, k.c.store_base + index);
  const std::int32_t rank = s.rank;
  std::int64_t strides[kMaxStoreRank];
  std::int64_t stride = 1;
  for (std::int32_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= s.dims[d];
  }
  std::uint8_t* out = k.results + s.output_offset;
  std::uint8_t* written = k.results + s.written_offset;
  const unsigned char* src = k.smem + s.smem_offset;
  for (std::uint64_t j = k.lane; j < s.elements; j += kLanes) {
    std::uint64_t rem = j;
    std::int64_t index_in_output = 0;
    for (std::int32_t d = rank - 1; d >= 0; --d) {
      std::int64_t coord = s.start[d];
      if (s.size[d] != 0) {
        const auto size = static_cast<std::uint64_t>(s.size[d]);
        coord += static_cast<std::int64_t>(rem % size);
        rem /= size;
      }
      index_in_output += coord * strides[d];
    }
    const auto e = static_cast<std::uint64_t>(index_in_output);
    store_element(out, s.elem_bits, e, load_element(src, s.elem_bits, j));
    written[e] = 1;
  }
  wg_sync(k.wg);
}

// The run_scoped entry barrier (gpu.barrier) as a software barrier over the CTA's warpgroups in
// global memory, so that it can time out: warpgroups that finished their program count as
// arrived (the simulator's model). Lane 0 of each warpgroup takes part; returns completion.
__device__ bool block_sync(const Cta& k, std::uint32_t slot, std::uint64_t timeout_ns) {
  DevControl* ctl = k.control();
  const std::uint32_t wgs = k.c.threads_per_cta;
  __threadfence_block();
  const std::uint32_t generation =
      *reinterpret_cast<volatile std::uint32_t*>(&ctl->sync_generation);
  const std::uint32_t now = atomicAdd(&ctl->sync_state, 1u) + 1u;
  if ((now & 0xFFFFu) + (now >> 16) == wgs) {
    atomicSub(&ctl->sync_state, now & 0xFFFFu);
    __threadfence_block();
    atomicAdd(&ctl->sync_generation, 1u);
  }
  const std::uint64_t start = global_ns();
  bool done = true;
  while (*reinterpret_cast<volatile std::uint32_t*>(&ctl->sync_generation) == generation) {
    if (global_ns() - start >= timeout_ns) {
      done = false;
      break;
    }
    __nanosleep(64);
  }
  __threadfence_block();
  if (slot != kNoSlot) {
    DevWaitResult* r = k.wait_result(slot);
    const std::uint64_t us = (global_ns() - start) / 1000;
    r->elapsed_us = us > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(us);
    r->status = done ? kWaitCompleted : kWaitTimedOut;
  }
  return done;
}

// A warpgroup that ran its whole program counts as arrived at every later block sync.
__device__ void finish_program(const Cta& k) {
  DevControl* ctl = k.control();
  __threadfence_block();
  const std::uint32_t now = atomicAdd(&ctl->sync_state, 0x10000u) + 0x10000u;
  if ((now & 0xFFFFu) > 0 && (now & 0xFFFFu) + (now >> 16) == k.c.threads_per_cta) {
    atomicSub(&ctl->sync_state, now & 0xFFFFu);
    __threadfence_block();
    atomicAdd(&ctl->sync_generation, 1u);
  }
}

// Runs the warpgroup's program; returns false when a wait ran out of time.
__device__ bool run_program(const Cta& k) {
  const DevLaunch& p = *k.p;
  const DevThread th =
      record<DevThread>(p, p.layout.threads, k.c.thread_base + k.rank * k.c.threads_per_cta + k.wg);
  for (std::uint32_t n = 0; n < th.num_steps; ++n) {
    const DevStep s = record<DevStep>(p, p.layout.steps, k.c.step_base + th.first_step + n);
    const std::uint32_t mbar = k.smem_base + s.mbar;
    switch (s.kind) {
      case kOpScopeEnter: {
        wg_sync(k.wg);
        bool first = false;
        if (k.lane == 0) first = atomicAdd(k.scope_live(s.a), 1u) == 0;
        if (wg_any(k.wg, first)) read_back(k, s.a);
        break;
      }
      case kOpScopeExit:
        read_back(k, s.a);
        if (k.lane == 0) atomicSub(k.scope_live(s.a), 1u);
        break;
      case kOpBlockSync: {
        wg_sync(k.wg);
        bool done = true;
        if (k.lane == 0) done = block_sync(k, s.slot, p.timeout_ns);
        if (!wg_all(k.wg, done)) return false;
        break;
      }
      case kOpArrive:
        if (k.lane < s.a) {
          const std::uint32_t tx = k.lane == 0 ? tx_lane0(s.c) : tx_others(s.c);
          if (s.b == 1) {
            if (tx != 0) {
              mbar_arrive_expect_tx(mbar, tx);
            } else {
              mbar_arrive(mbar, 1);
            }
          } else {
            if (tx != 0) mbar_expect_tx(mbar, tx);
            mbar_arrive(mbar, s.b);
          }
        }
        break;
      case kOpRemoteArrive:
        if (k.lane % 8 == 0 && k.lane / 8 < kMaxClusterCtas && ((s.mask >> (k.lane / 8)) & 1u)) {
          mbar_remote_arrive(mbar, k.lane / 8);
        }
        break;
      case kOpCompleteTx:
        if (k.lane == 0) mbar_complete_tx(mbar, static_cast<std::uint32_t>(s.c));
        break;
      case kOpLoadTensor:
        if (k.lane == 0 && (s.flags & kFlagPredicate)) {
          const std::uint8_t* tmap =
              p.tables + p.layout.tmaps + std::uint64_t{k.c.tmap_base + s.a} * kTensorMapBytes;
          const int rank = tensor_rank(s.flags);
          const std::uint32_t dst = k.smem_base + s.b;
          tensormap_acquire(tmap);
          if (s.flags & kFlagLeader) {
#if defined(COLLFUZZ_HAVE_CTA_GROUP_2)
            tma_load_pair(dst, tmap, s.coords, map_to_rank(mbar, static_cast<std::uint32_t>(s.c)),
                          (s.flags & kFlagMulticast) != 0, s.mask, rank);
#else
            atomicOr(k.status(), kStatusUnsupportedStep);
#endif
          } else if (s.flags & kFlagMulticast) {
            tma_load_multicast(dst, tmap, s.coords, mbar, s.mask, rank);
          } else {
            tma_load(dst, tmap, s.coords, mbar, rank);
          }
        }
        break;
      case kOpLoadBulk:
        if (k.lane == 0 && (s.flags & kFlagPredicate)) {
          const std::uint64_t input =
              record<std::uint64_t>(p, p.layout.input_offsets, k.c.input_base + s.slot);
          const std::uint8_t* src =
              p.inputs + static_cast<std::int64_t>(input) + static_cast<std::int64_t>(s.c);
          bulk_load(k.smem_base + s.b, src, s.a, mbar);
        }
        break;
      case kOpStore:
        store(k, s.a);
        break;
      case kOpWait: {
        const std::uint64_t start = global_ns();
        bool done = false;
        while (true) {
          if (mbar_try_wait(mbar, s.a)) {
            done = true;
            break;
          }
          if (global_ns() - start >= p.timeout_ns) break;
        }
        const bool all = wg_all(k.wg, done);
        if (k.lane == 0 && s.slot != kNoSlot) {
          DevWaitResult* r = k.wait_result(s.slot);
          const std::uint64_t us = (global_ns() - start) / 1000;
          r->elapsed_us = us > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<std::uint32_t>(us);
          if (!all) r->mbarrier_word = mbar_word(mbar);
          r->status = all ? kWaitCompleted : kWaitTimedOut;
        }
        if (!all) return false;
        break;
      }
      default:
        if (k.lane == 0) atomicOr(k.status(), kStatusUnsupportedStep);
        return false;
    }
  }
  return true;
}

// One cluster per case: the case is the cluster's index along x.
__global__ void __launch_bounds__(1024, 1)
    collfuzz_interpreter(const __grid_constant__ DevLaunch p) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const std::uint32_t case_index = cluster_id_x();
  if (case_index >= p.num_cases) return;  // uniform over the cluster
  Cta k;
  k.p = &p;
  k.c = record<DevCase>(p, p.layout.cases, case_index);
  k.results = p.results + k.c.results_base;
  k.smem = smem;
  k.smem_base = shared_address(smem);
  k.rank = cluster_ctarank();
  k.wg = threadIdx.x / kLanes;
  k.lane = threadIdx.x % kLanes;
  const std::uint32_t tid = threadIdx.x;
  const std::uint32_t threads = blockDim.x;

  // Uniform over the cluster: every CTA returns, or none does.
  if (threads != k.c.threads_per_cta * kLanes || blockDim.y != 1 || blockDim.z != 1 ||
      cluster_nctarank() != k.c.num_ctas) {
    if (tid == 0) atomicOr(k.status(), kStatusBadGeometry);
    return;
  }
  if (k.rank == 0 && tid == 0) {
    atomicOr(k.status(), kStatusRan);
    reinterpret_cast<DevCaseStatus*>(k.results)->smem_base = k.smem_base;
  }
  if (k.smem_base % 128 != 0) {
    if (tid == 0) atomicOr(k.status(), kStatusSmemMisaligned);
    return;
  }

  // 1. Sentinel, mbarriers, fences, cluster barrier.
  {
    const uint4 sentinel = make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
    const std::uint32_t vectors = k.c.smem_scratch / 16;
    for (std::uint32_t i = tid; i < vectors; i += threads)
      reinterpret_cast<uint4*>(smem)[i] = sentinel;
    for (std::uint32_t i = vectors * 16 + tid; i < k.c.smem_scratch; i += threads) smem[i] = 0xA5;
  }
  if (tid == 0) {
    for (std::uint32_t m = 0; m < k.c.num_mbars; ++m) {
      const DevMbar mb = record<DevMbar>(p, p.layout.mbars, k.c.mbar_base + m);
      mbar_init(k.smem_base + mb.smem_offset, mb.count);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // sentinel before TMA writes
  __syncthreads();
  cluster_sync();

  // 2. The program.
  const bool finished = run_program(k);
  if (k.lane == 0) {
    if (finished) {
      finish_program(k);
    } else {
      atomicOr(k.status(), kStatusTimeout);
    }
  }

  // 3. Drain.
  __syncthreads();
  cluster_sync();
  if (tid == 0) {
    const bool timed_out =
        (*reinterpret_cast<volatile std::uint32_t*>(k.status()) & kStatusTimeout) != 0;
    const std::uint64_t grace = timed_out && p.grace_ns < 100'000 ? 100'000 : p.grace_ns;
    const std::uint64_t start = global_ns();
    while (global_ns() - start < grace) __nanosleep(256);
  }
  __syncthreads();
  if (k.wg == 0) {
    for (std::uint32_t s = 0; s < k.c.num_scopes; ++s) {
      const std::uint32_t live = *reinterpret_cast<volatile std::uint32_t*>(k.scope_live(s));
      if (live > 0) read_back(k, s);
    }
  }
}

// The launch floor and the launch probe: a cluster kernel that only crosses the cluster barrier.
__global__ void collfuzz_empty_cluster() { cluster_sync(); }

cudaLaunchConfig_t launch_config(const KernelConfig& k, cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(k.grid[0], k.grid[1], k.grid[2]);
  config.blockDim = dim3(k.block_threads, 1, 1);
  config.dynamicSmemBytes = k.smem_bytes;
  config.stream = static_cast<cudaStream_t>(k.stream);
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = k.cluster[0];
  attribute->val.clusterDim.y = k.cluster[1];
  attribute->val.clusterDim.z = k.cluster[2];
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

}  // namespace

int launch_interpreter(const KernelConfig& k, const DevLaunch& params) {
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(k, &attribute);
  return static_cast<int>(cudaLaunchKernelEx(&config, collfuzz_interpreter, params));
}

int launch_empty_cluster(const KernelConfig& k) {
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(k, &attribute);
  return static_cast<int>(cudaLaunchKernelEx(&config, collfuzz_empty_cluster));
}

const void* interpreter_symbol() { return reinterpret_cast<const void*>(&collfuzz_interpreter); }
const void* empty_cluster_symbol() {
  return reinterpret_cast<const void*>(&collfuzz_empty_cluster);
}

int max_active_clusters(const KernelConfig& k, int& error) {
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(k, &attribute);
  int clusters = 0;
  const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, collfuzz_interpreter, &config);
  error = static_cast<int>(e);
  return e == cudaSuccess ? clusters : -1;
}

}  // namespace collfuzz::gpu
