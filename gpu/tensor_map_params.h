// The arguments of cuTensorMapEncodeTiled for one TMA load of a plan, computed on the host as
// Mosaic GPU's runtime (jaxlib/mosaic/gpu/runtime.cc, mosaic_gpu_init_tma_desc) computes them:
// dims innermost first, byte strides of the outer dims, the box, unit element strides, no
// interleave, no swizzle (the case format has no SMEM transforms), no L2 promotion, and
// out-of-bounds elements filled with zeros. Sub-byte elements are packed into bytes along the
// contiguous dim. The documented constraints of cuTensorMapEncodeTiled (cuda.h, CUDA 13.0) are
// checked here so that a unit test can see them; the driver still has the last word.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpu/device_plan.h"
#include "harness/core/dtype.h"
#include "harness/lowering/plan.h"

namespace collfuzz::gpu {

// CUtensorMapDataType values (cuda.h), without including cuda.h in host-only code.
enum class TmaDataType : std::uint32_t {
  kUInt8 = 0,
  kUInt16 = 1,
  kUInt32 = 2,
  kInt32 = 3,
  kUInt64 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBFloat16 = 9,
};

// Exactly 128 bytes, so that the CPU emulator can keep it where the device keeps a CUtensorMap.
struct TensorMapParams {
  std::uint64_t global_address = 0;  // filled in when the input's place is known
  std::uint32_t data_type = 0;       // TmaDataType
  std::uint32_t rank = 0;
  std::uint64_t global_dim[kMaxTensorRank] = {};          // innermost first, in (packed) elements
  std::uint64_t global_strides[kMaxTensorRank - 1] = {};  // bytes, dims 1..rank-1
  std::uint32_t box[kMaxTensorRank] = {};
  std::uint32_t element_strides[kMaxTensorRank] = {};
};
static_assert(sizeof(TensorMapParams) == kTensorMapBytes);

int tma_element_bytes(TmaDataType t);

// What Mosaic GPU's runtime leaves to an `assert` for sub-byte elements (packed two per byte):
// a contiguous extent, box or outer stride of no whole number of bytes. jaxlib built without
// assertions halves them, truncating; with them it aborts. The executor does not run such a copy
// (unavailable): which of the two JAX does is not the case's to say.
std::optional<std::string> packed_extents_unknown(const lowering::TensorBox& box, DType dtype);

// The parameters for a load of `box` from an input of `dtype`, or why they cannot be formed
// (a violated documented constraint, worded as Mosaic's runtime words it where it checks).
// Sub-byte extents are halved as the runtime halves them: packed_extents_unknown first.
std::optional<std::string> tensor_map_params(const lowering::TensorBox& box, DType dtype,
                                             TensorMapParams& out);

// The coordinates of the box, innermost first and in packed elements, or why they do not fit
// the instruction's signed 32-bit operands.
std::optional<std::string> tensor_coords(const lowering::TensorBox& box, DType dtype,
                                         std::int32_t (&coords)[kMaxTensorRank]);

}  // namespace collfuzz::gpu
