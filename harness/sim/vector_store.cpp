#include "harness/sim/vector_store.h"

#include <algorithm>

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

// The value of element j of `v` (row-major over the store's shape).
VectorElement element_value(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                            const SharedMemory& local, const ClusterSmem& cluster,
                            const std::vector<GmemArray>& inputs, const CarryRegisters& registers,
                            std::int64_t store_j, std::vector<VectorElement>& stack) {
  const auto first = plan.vector_nodes.begin() + v.first_node;
  const auto last = first + v.num_nodes;
  stack.clear();
  for (auto n = first; n != last; ++n) {
    // The leaf's own element: below a broadcast, the operand's (new leading dims repeat it); the
    // count equals the store's outside broadcasts, where the division is skipped.
    const auto own = [&] { return store_j < n->elements ? store_j : store_j % n->elements; };
    switch (n->kind) {
      case VectorKind::kBroadcast:
        break;  // its operand's value, on the stack already
      case VectorKind::kConst:
        stack.push_back({n->bits, false});
        break;
      case VectorKind::kLoadSmem: {
        // A cluster_ref's peer CTA's SMEM, or the CTA's own.
        const SharedMemory& smem =
            n->smem_rank < 0 ? local : *cluster.at(static_cast<std::size_t>(n->smem_rank));
        const int bits = dtype_bits(n->dtype);
        const std::int64_t j = own();
        if (n->places >= 0) {  // a transformed ref: element j at its physical place
          const std::int64_t at =
              n->smem_offset +
              plan.smem_places[static_cast<std::size_t>(n->places)][static_cast<std::size_t>(j)];
          stack.push_back(
              {load_packed(smem.data() + at, bits, 0), smem.any_undefined(at, bits / 8)});
          break;
        }
        stack.push_back({load_packed(smem.data() + n->smem_offset, bits, j),
                         smem.any_undefined(n->smem_offset + j * (bits / 8), bits / 8)});
        break;
      }
      case VectorKind::kLoadInput:
        stack.push_back(
            {inputs[static_cast<std::size_t>(n->input)].element(array_element(n->slice, own())),
             false});
        break;
      case VectorKind::kIota:
        stack.push_back({vector_iota(n->dtype, own() / n->iota_inner % n->iota_size), false});
        break;
      case VectorKind::kCarry:
        stack.push_back(
            registers[static_cast<std::size_t>(n->reg)][static_cast<std::size_t>(own())]);
        break;
      case VectorKind::kConvert: {
        const VectorElement a = stack.back();
        VectorElement r = vector_convert(n->from, n->dtype, a.bits, ComputedBy::kHardware);
        r.unspecified = r.unspecified || a.unspecified;
        stack.back() = r;
        break;
      }
      default: {
        const VectorElement b = stack.back();
        stack.pop_back();
        const VectorElement a = stack.back();
        VectorElement r = vector_binary(n->kind, n->dtype, a.bits, b.bits, ComputedBy::kHardware);
        r.unspecified = r.unspecified || a.unspecified || b.unspecified;
        stack.back() = r;
        break;
      }
    }
  }
  return stack.back();
}

// The element count of the store: its slice's, or the SMEM ref's (the value's loads have it).
std::int64_t store_elements(const lowering::VectorStoreOp& v) {
  std::int64_t elements = 1;
  for (int k = 0; k < v.slice.rank; ++k) {
    if (v.slice.size[k] != 0) elements *= v.slice.size[k];
  }
  return elements;
}

}  // namespace

void run_vector_store(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                      const SharedMemory& smem, const ClusterSmem& cluster,
                      const std::vector<GmemArray>& inputs, const CarryRegisters& registers,
                      std::vector<std::uint8_t>& out_bytes,
                      std::vector<std::uint8_t>& out_written) {
  const DType dtype = plan.outputs[static_cast<std::size_t>(v.output)].dtype;
  const int bits = dtype_bits(dtype);
  const std::int64_t elements = store_elements(v);
  std::vector<VectorElement> stack;
  stack.reserve(static_cast<std::size_t>(v.num_nodes));
  for (std::int64_t j = 0; j < elements; ++j) {
    const VectorElement r = element_value(plan, v, smem, cluster, inputs, registers, j, stack);
    const std::int64_t index = array_element(v.slice, j);
    store_packed(out_bytes.data(), bits, index, r.bits);
    out_written[static_cast<std::size_t>(index)] = r.unspecified ? 0 : 1;
  }
}

void run_vector_store_smem(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                           const SharedMemory& smem, SharedMemory& dst, const ClusterSmem& cluster,
                           const std::vector<GmemArray>& inputs, const CarryRegisters& registers,
                           std::vector<UnfencedBytes>& unfenced) {
  const DType dtype = v.dtype;
  const int width = dtype_bits(dtype) / 8;
  const std::int64_t elements = v.elements;
  std::vector<VectorElement> stack;
  std::vector<VectorElement> values;
  values.reserve(static_cast<std::size_t>(elements));
  for (std::int64_t j = 0; j < elements; ++j)
    values.push_back(element_value(plan, v, smem, cluster, inputs, registers, j, stack));
  const std::uint8_t* at = dst.data() + v.smem_offset;
  // A DSMEM write (into a peer's SMEM) is not the thread's unfenced write of its own SMEM.
  if (v.smem_rank < 0)
    unfenced.push_back(
        UnfencedBytes{v.smem_offset, std::vector<std::uint8_t>(at, at + elements * width)});
  // A transformed ref's element j lies at its physical place (a leading index's block is as
  // contiguous as the logical one, so the unfenced span above holds).
  const std::vector<std::int64_t>* places =
      v.places >= 0 ? &plan.smem_places[static_cast<std::size_t>(v.places)] : nullptr;
  for (std::int64_t j = 0; j < elements; ++j) {
    const std::int64_t place = places ? (*places)[static_cast<std::size_t>(j)] : j * width;
    store_packed(dst.data() + v.smem_offset + place, dtype_bits(dtype), 0,
                 values[static_cast<std::size_t>(j)].bits);
    dst.mark(v.smem_offset + place, width, values[static_cast<std::size_t>(j)].unspecified);
  }
}

void run_vector_store_register(const lowering::Plan& plan, const lowering::VectorStoreOp& v,
                               const SharedMemory& smem, const ClusterSmem& cluster,
                               const std::vector<GmemArray>& inputs, CarryRegisters& registers) {
  std::vector<VectorElement> stack;
  std::vector<VectorElement> values;
  values.reserve(static_cast<std::size_t>(v.elements));
  for (std::int64_t j = 0; j < v.elements; ++j)
    values.push_back(element_value(plan, v, smem, cluster, inputs, registers, j, stack));
  registers[static_cast<std::size_t>(v.to_register)] = std::move(values);
}

const std::uint8_t* async_proxy_view(const SharedMemory& smem, std::int64_t offset, std::int64_t n,
                                     const std::vector<const std::vector<UnfencedBytes>*>& threads,
                                     std::vector<std::uint8_t>& scratch) {
  const std::uint8_t* bytes = smem.data() + offset;
  bool copied = false;
  for (const auto* records : threads) {
    // The latest first, so that the bytes before a thread's first unfenced write win.
    for (auto r = records->rbegin(); r != records->rend(); ++r) {
      const std::int64_t lo = std::max(offset, r->offset);
      const std::int64_t hi =
          std::min(offset + n, r->offset + static_cast<std::int64_t>(r->old.size()));
      if (lo >= hi) continue;
      if (!copied) {
        scratch.assign(bytes, bytes + n);
        copied = true;
      }
      std::copy(r->old.begin() + (lo - r->offset), r->old.begin() + (hi - r->offset),
                scratch.begin() + (lo - offset));
    }
  }
  return copied ? scratch.data() : bytes;
}

}  // namespace collfuzz::sim
