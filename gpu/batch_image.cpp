#include "gpu/batch_image.h"

#include <cstring>
#include <stdexcept>

namespace collfuzz::gpu {
namespace {

constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

template <typename T>
std::uint64_t append(std::vector<std::uint8_t>& out, const std::vector<T>& v, std::uint64_t align) {
  const std::uint64_t at = align_up(out.size(), align);
  out.resize(at + v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(T));
  return at;
}

template <typename T>
std::uint32_t index_of(const std::vector<T>& v) {
  if (v.size() > 0xFFFFFFF0u) throw std::length_error("batch table over 2^32 records");
  return static_cast<std::uint32_t>(v.size());
}

}  // namespace

void BatchImage::add(const EncodedCase& c, const std::vector<std::uint64_t>& input_offsets,
                     const std::vector<TensorMapBytes>& tensor_maps) {
  if (!(c.shape == shape_)) throw std::invalid_argument("a case of another launch shape");
  if (input_offsets.size() != c.inputs.size() || tensor_maps.size() != c.tensor_maps.size()) {
    throw std::invalid_argument("inputs or tensor maps missing");
  }
  DevCase d;
  d.num_ctas = c.num_ctas;
  d.threads_per_cta = c.shape.threads_per_cta;
  d.step_base = index_of(steps_);
  d.thread_base = index_of(threads_);
  d.mbar_base = index_of(mbars_);
  d.num_mbars = static_cast<std::uint32_t>(c.mbars.size());
  d.scope_base = index_of(scopes_);
  d.num_scopes = c.num_scopes;
  d.buffer_base = index_of(buffers_);
  d.store_base = index_of(stores_);
  d.tmap_base = index_of(tmaps_);
  d.input_base = index_of(input_offsets_);
  d.smem_scratch = c.smem_scratch;
  d.smem_bytes = c.smem_bytes;
  d.results_base = results_bytes_;
  d.control_offset = c.control_offset;
  d.control_stride = c.control_stride;
  d.waits_offset = c.waits_offset;
  results_bytes_ = align_up(results_bytes_ + c.results_bytes, 256);
  smem_bytes_ = std::max(smem_bytes_, c.smem_bytes);
  cases_.push_back(d);
  threads_.insert(threads_.end(), c.threads.begin(), c.threads.end());
  steps_.insert(steps_.end(), c.steps.begin(), c.steps.end());
  mbars_.insert(mbars_.end(), c.mbars.begin(), c.mbars.end());
  scopes_.insert(scopes_.end(), c.scopes.begin(), c.scopes.end());
  buffers_.insert(buffers_.end(), c.buffers.begin(), c.buffers.end());
  stores_.insert(stores_.end(), c.stores.begin(), c.stores.end());
  input_offsets_.insert(input_offsets_.end(), input_offsets.begin(), input_offsets.end());
  tmaps_.insert(tmaps_.end(), tensor_maps.begin(), tensor_maps.end());
}

void BatchImage::finish() {
  bytes_.clear();
  layout_.cases = append(bytes_, cases_, 16);
  layout_.threads = append(bytes_, threads_, 16);
  layout_.steps = append(bytes_, steps_, 16);
  layout_.mbars = append(bytes_, mbars_, 16);
  layout_.scopes = append(bytes_, scopes_, 16);
  layout_.buffers = append(bytes_, buffers_, 16);
  layout_.stores = append(bytes_, stores_, 16);
  layout_.input_offsets = append(bytes_, input_offsets_, 16);
  layout_.tmaps = append(bytes_, tmaps_, 128);
  bytes_.resize(align_up(std::max<std::size_t>(bytes_.size(), 1), 256));
  layout_.bytes = bytes_.size();
}

}  // namespace collfuzz::gpu
