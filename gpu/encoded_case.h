// One case's plan in the device-table form (gpu/device_plan.h), with the results layout the
// kernel writes and what the decoder needs to turn those results into an Outcome. Indices and
// offsets are relative to the case; a batch places it (gpu/batch_image.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/device_plan.h"
#include "gpu/tensor_map_params.h"
#include "harness/core/case.h"

namespace collfuzz::gpu {

// What a wait result slot stands for.
struct WaitMeta {
  std::int64_t cta = 0;
  std::int64_t thread = 0;
  std::string op;       // JSON path
  std::string barrier;  // "alloc[index]" or "block_sync"
  std::int64_t phase = 0;
};

// One SMEM buffer of one CTA: where its read-back lands in the case's results.
struct BufferMeta {
  std::int64_t cta = 0;
  std::int32_t buffer = 0;  // lowering::Plan::buffers index
  std::string alloc;
  std::uint32_t bytes = 0;
  std::uint64_t result_offset = 0;
  std::uint64_t flag_offset = 0;
};

struct OutputMeta {
  std::string name;
  DType dtype = DType::kFloat32;
  std::int64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;          // its bytes in the case's results
  std::uint64_t written_offset = 0;  // one byte per element
};

// A tensor map the case needs: which input, and the parameters (global address still unset).
struct TensorMapRequest {
  std::int32_t input = 0;
  TensorMapParams params;
};

// The launch shape a batch shares.
struct LaunchShape {
  std::array<std::uint32_t, 3> cluster{1, 1, 1};  // CUDA (x, y, z)
  std::uint32_t threads_per_cta = 1;              // warpgroups
  bool operator==(const LaunchShape&) const = default;
  bool operator<(const LaunchShape& o) const {
    return cluster != o.cluster ? cluster < o.cluster : threads_per_cta < o.threads_per_cta;
  }
};

struct EncodedCase {
  LaunchShape shape;
  std::uint32_t num_ctas = 1;
  std::uint32_t smem_scratch = 0;
  std::uint32_t smem_bytes = 0;
  bool leader_tracked = false;  // uses .cta_group::2 (sm_100a)

  std::vector<DevThread> threads;  // num_ctas * threads_per_cta, rank major
  std::vector<DevStep> steps;
  std::vector<DevMbar> mbars;
  std::uint32_t num_scopes = 0;
  std::vector<DevScope> scopes;    // num_ctas * num_scopes, rank major
  std::vector<DevBuffer> buffers;  // what the scopes point at
  std::vector<DevStore> stores;
  std::vector<TensorMapRequest> tensor_maps;
  std::vector<ArraySpec> inputs;

  // The results of the case (relative to its base).
  std::uint64_t results_bytes = 0;
  std::uint64_t control_offset = 0;
  std::uint64_t control_stride = 0;
  std::uint64_t waits_offset = 0;

  std::vector<WaitMeta> waits;          // per slot, in (rank, thread, program) order
  std::vector<BufferMeta> buffer_meta;  // per (rank, buffer), rank major
  std::vector<OutputMeta> outputs;
  std::vector<std::vector<std::int64_t>> cta_coords;
};

}  // namespace collfuzz::gpu
