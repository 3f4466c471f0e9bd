#include "gpu/tensor_map_params.h"

#include <limits>

namespace collfuzz::gpu {
namespace {

// launch_context._tma_dma_type: integer and float types keep their own TMA type where one exists;
// 8-bit floats travel as bytes; sub-byte integers are packed two per byte. With a zero
// out-of-bounds fill only the width matters to a copy.
TmaDataType data_type(DType d) {
  switch (d) {
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return TmaDataType::kUInt8;
    case DType::kInt16:
    case DType::kUInt16:
      return TmaDataType::kUInt16;
    case DType::kFloat16:
      return TmaDataType::kFloat16;
    case DType::kBFloat16:
      return TmaDataType::kBFloat16;
    case DType::kInt32:
      return TmaDataType::kInt32;
    case DType::kUInt32:
      return TmaDataType::kUInt32;
    case DType::kFloat32:
      return TmaDataType::kFloat32;
    case DType::kInt64:
      return TmaDataType::kInt64;
    case DType::kUInt64:
    case DType::kFloat64:
      return TmaDataType::kUInt64;
  }
  return TmaDataType::kUInt8;
}

int packing(DType d) { return dtype_info(d).bits < 8 ? 8 / dtype_info(d).bits : 1; }

}  // namespace

int tma_element_bytes(TmaDataType t) {
  switch (t) {
    case TmaDataType::kUInt8:
      return 1;
    case TmaDataType::kUInt16:
    case TmaDataType::kFloat16:
    case TmaDataType::kBFloat16:
      return 2;
    case TmaDataType::kUInt32:
    case TmaDataType::kInt32:
    case TmaDataType::kFloat32:
      return 4;
    case TmaDataType::kUInt64:
    case TmaDataType::kInt64:
    case TmaDataType::kFloat64:
      return 8;
  }
  return 1;
}

std::optional<std::string> packed_extents_unknown(const lowering::TensorBox& t, DType dtype) {
  const int pack = packing(dtype);
  if (pack == 1 || t.rank < 1 || t.rank > kMaxTensorRank) return std::nullopt;
  const int minor = t.rank - 1;
  const auto name = [&](const char* what, std::int64_t n) {
    return std::string("a TMA copy of ") + std::to_string(8 / pack) + "-bit elements whose " +
           what + " (" + std::to_string(n) +
           " elements) is no whole number of bytes: Mosaic GPU's runtime only asserts it "
           "(mosaic_gpu_init_tma_desc), so what JAX does depends on how jaxlib was built";
  };
  if (t.dims[minor] % pack != 0) return name("contiguous extent", t.dims[minor]);
  if (t.box[minor] % pack != 0) return name("box along the contiguous dim", t.box[minor]);
  for (int k = 0; k < minor; ++k) {
    if (t.strides[k] % pack != 0) return name("stride", t.strides[k]);
  }
  return std::nullopt;
}

std::optional<std::string> tensor_map_params(const lowering::TensorBox& t, DType dtype,
                                             TensorMapParams& out) {
  out = TensorMapParams{};
  const int rank = t.rank;
  if (rank < 1 || rank > kMaxTensorRank) {
    return "Rank must be in [1, 5], but got " + std::to_string(rank);
  }
  if (t.strides[rank - 1] != 1) {
    return "Minormost stride must be 1, but got " + std::to_string(t.strides[rank - 1]);
  }
  const TmaDataType type = data_type(dtype);
  const int pack = packing(dtype);
  const std::int64_t elem_bytes = tma_element_bytes(type);
  out.data_type = static_cast<std::uint32_t>(type);
  out.rank = static_cast<std::uint32_t>(rank);
  for (int i = 0; i < rank; ++i) {
    const int k = rank - 1 - i;  // the plan's dims are outermost first
    std::int64_t dim = t.dims[k];
    std::int64_t box = t.box[k];
    if (i == 0 && pack > 1) {  // whole bytes: packed_extents_unknown
      dim /= pack;
      box /= pack;
    }
    if (dim < 1 || dim > (std::int64_t{1} << 32)) {
      return "TMA size must be less than 2**32, but got " + std::to_string(dim) + " at index " +
             std::to_string(k);
    }
    if (box < 1 || box > 256) {
      return "Window shape must be in [0, 256], but got " + std::to_string(box) + " at index " +
             std::to_string(k);
    }
    if (i == 0 && (box * elem_bytes) % 16 != 0) {
      return "The last dimension of window shape must have a bytewidth divisible by 16, but got " +
             std::to_string(box) + "*" + std::to_string(elem_bytes) + " at index " +
             std::to_string(k);
    }
    out.global_dim[i] = static_cast<std::uint64_t>(dim);
    out.box[i] = static_cast<std::uint32_t>(box);
    out.element_strides[i] = 1;
    if (i > 0) {
      std::int64_t stride = t.strides[k];
      if (pack > 1) stride /= pack;  // whole bytes: packed_extents_unknown
      const std::int64_t bytes = stride * elem_bytes;
      if (bytes <= 0 || bytes % 16 != 0 || bytes >= (std::int64_t{1} << 40)) {
        return "Byte strides must be divisible by 16 and less than 2**40, but got " +
               std::to_string(bytes) + " at index " + std::to_string(k);
      }
      out.global_strides[i - 1] = static_cast<std::uint64_t>(bytes);
    }
  }
  return std::nullopt;
}

std::optional<std::string> tensor_coords(const lowering::TensorBox& t, DType dtype,
                                         std::int32_t (&coords)[kMaxTensorRank]) {
  const int pack = packing(dtype);
  for (int i = 0; i < kMaxTensorRank; ++i) coords[i] = 0;
  for (int i = 0; i < t.rank && i < kMaxTensorRank; ++i) {
    const int k = t.rank - 1 - i;
    std::int64_t c = t.coords[k];
    if (i == 0 && pack > 1) {
      if (c % pack != 0) {
        return "a packed box starting at element " + std::to_string(c) +
               " of the contiguous dim does not start on a byte";
      }
      c /= pack;
    }
    if (c < std::numeric_limits<std::int32_t>::min() ||
        c > std::numeric_limits<std::int32_t>::max()) {
      return "tensor coordinate " + std::to_string(c) + " does not fit a signed 32-bit operand";
    }
    coords[i] = static_cast<std::int32_t>(c);
  }
  return std::nullopt;
}

}  // namespace collfuzz::gpu
