#include "harness/sim/vector_store.h"

#include "harness/core/vector_arith.h"

namespace collfuzz::sim {
namespace {

// The array element that element j (row-major over the slice's sized dims) of `s` is.
std::int64_t array_element(const lowering::ArraySlice& s, std::int64_t j) {
  std::int64_t index = 0;
  std::int64_t stride = 1;
  for (int k = s.rank - 1; k >= 0; --k) {
    std::int64_t c = s.start[k];
    if (s.size[k] != 0) {
      c += j % s.size[k];
      j /= s.size[k];
    }
    index += c * stride;
    stride *= s.dims[k];
  }
  return index;
}

}  // namespace

void run_vector_store(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                      const SharedMemory& smem, const std::vector<GmemArray>& inputs,
                      std::vector<std::uint8_t>& out_bytes,
                      std::vector<std::uint8_t>& out_written) {
  const DType dtype = plan.outputs[static_cast<std::size_t>(v.output)].dtype;
  const int bits = dtype_bits(dtype);
  const int width = bits / 8;
  std::int64_t elements = 1;
  for (int k = 0; k < v.slice.rank; ++k) {
    if (v.slice.size[k] != 0) elements *= v.slice.size[k];
  }
  const auto first = plan.vector_nodes.begin() + v.first_node;
  const auto last = first + v.num_nodes;
  std::vector<VectorElement> stack;
  stack.reserve(static_cast<std::size_t>(v.num_nodes));
  for (std::int64_t j = 0; j < elements; ++j) {
    stack.clear();
    for (auto n = first; n != last; ++n) {
      switch (n->kind) {
        case VectorKind::kConst:
          stack.push_back({n->bits, false});
          break;
        case VectorKind::kLoadSmem: {
          const std::int64_t at = n->smem_offset + j * width;
          stack.push_back(
              {load_packed(smem.data() + n->smem_offset, bits, j), smem.any_undefined(at, width)});
          break;
        }
        case VectorKind::kLoadInput:
          stack.push_back(
              {inputs[static_cast<std::size_t>(n->input)].element(array_element(n->slice, j)),
               false});
          break;
        default: {
          const VectorElement b = stack.back();
          stack.pop_back();
          const VectorElement a = stack.back();
          VectorElement r = vector_binary(n->kind, dtype, a.bits, b.bits);
          r.unspecified = r.unspecified || a.unspecified || b.unspecified;
          stack.back() = r;
          break;
        }
      }
    }
    const std::int64_t index = array_element(v.slice, j);
    store_packed(out_bytes.data(), bits, index, stack.back().bits);
    out_written[static_cast<std::size_t>(index)] = stack.back().unspecified ? 0 : 1;
  }
}

}  // namespace collfuzz::sim
