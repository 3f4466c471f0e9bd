#include "harness/sim/gmem_inputs.h"

#include "harness/core/fill.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {
namespace {

constexpr std::int64_t kMaterialiseBytes = std::int64_t{4} << 20;

bool same_contents(const ArraySpec& a, const ArraySpec& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.fill.pattern == b.fill.pattern &&
         a.fill.seed == b.fill.seed && a.fill.value == b.fill.value;
}

}  // namespace

GmemArray::GmemArray(const ArraySpec& spec, std::shared_ptr<const std::vector<std::uint8_t>> bytes)
    : spec_(&spec),
      bytes_(std::move(bytes)),
      elements_(element_count(spec.shape)),
      bits_(dtype_bits(spec.dtype)) {}

std::uint64_t GmemArray::element(std::int64_t i) const {
  if (bytes_) return load_packed(bytes_->data(), bits_, i);
  return fill_element_bits(*spec_, i);
}

GmemArray GmemInputCache::array(const ArraySpec& spec) {
  const std::int64_t bytes = packed_bytes(element_count(spec.shape), spec.dtype);
  if (bytes > kMaterialiseBytes) return GmemArray(spec, nullptr);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (same_contents(it->spec, spec)) {
      entries_.splice(entries_.begin(), entries_, it);
      return GmemArray(spec, entries_.front().bytes);
    }
  }
  entries_.push_front(
      Entry{spec, std::make_shared<const std::vector<std::uint8_t>>(fill_bytes(spec))});
  held_ += bytes;
  while (held_ > budget_ && entries_.size() > 1) {
    held_ -= static_cast<std::int64_t>(entries_.back().bytes->size());
    entries_.pop_back();
  }
  return GmemArray(spec, entries_.front().bytes);
}

}  // namespace collfuzz::sim
