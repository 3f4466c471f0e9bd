#include "harness/core/memref_text.h"

namespace collfuzz {
namespace {

const char* element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "f32";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kFloat64:
      return "f64";
    case DType::kInt8:
    case DType::kUInt8:
      return "i8";
    case DType::kInt16:
    case DType::kUInt16:
      return "i16";
    case DType::kInt32:
    case DType::kUInt32:
      return "i32";
    default:
      return "i64";
  }
}

}  // namespace

std::string memref_text(DType dtype, const Shape& ref_shape, const std::vector<IndexEntry>& index,
                        bool smem, bool cluster) {
  std::vector<std::int64_t> strides(ref_shape.size(), 1);
  for (std::size_t d = ref_shape.size(); d-- > 1;) strides[d - 1] = strides[d] * ref_shape[d];
  std::string dims;
  std::string kept_strides;
  std::int64_t offset = 0;
  bool dynamic = false;
  for (std::size_t d = 0; d < ref_shape.size(); ++d) {
    std::int64_t size = ref_shape[d];
    if (d < index.size()) {
      const IndexEntry& e = index[d];
      if (e.kind == IndexEntry::Kind::kAt) {
        dynamic = true;
        continue;
      }
      if (!e.whole) size = e.size;
      if (e.dyn_start) {
        dynamic = true;
      } else if (!e.whole) {
        offset += e.start * strides[d];
      }
    }
    dims += std::to_string(size) + "x";
    kept_strides += (kept_strides.empty() ? "" : ", ") + std::to_string(strides[d]);
  }
  std::string text = "memref<" + dims + element_type(dtype);
  if (!index.empty()) {
    text += ", strided<[" + kept_strides + "]";
    if (dynamic) {
      text += ", offset: ?";
    } else if (offset != 0) {
      text += ", offset: " + std::to_string(offset);
    }
    text += ">";
  }
  if (cluster) {
    text += ", 7 : i32";
  } else if (smem) {
    text += ", #gpu.address_space<workgroup>";
  }
  return text + ">";
}

std::vector<IndexEntry> smem_index_entries(const std::vector<std::int64_t>& smem_index,
                                           bool slotted) {
  std::vector<IndexEntry> out;
  for (std::size_t k = 0; k < smem_index.size(); ++k) {
    IndexEntry e;
    e.kind = IndexEntry::Kind::kAt;
    e.at = smem_index[k];
    if (k == 0 && slotted) e.dyn_start = DynStart{};
    out.push_back(e);
  }
  return out;
}

}  // namespace collfuzz
