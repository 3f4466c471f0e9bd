#include "harness/sim/gmem_inputs.h"

#include "harness/core/fill.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {
namespace {

constexpr std::int64_t kMaterialiseBytes = std::int64_t{4} << 20;

// What decides an array's contents, as bytes: its dtype, fill and shape.
std::string contents_key(const ArraySpec& a) {
  std::string key;
  key.reserve(3 + 2 * sizeof(std::int64_t) + a.shape.size() * sizeof(std::int64_t));
  key.push_back(static_cast<char>(a.dtype));
  key.push_back(static_cast<char>(a.fill.pattern));
  const auto put = [&](auto v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(a.fill.seed);
  put(a.fill.value);
  put(a.fill.start);
  put(a.fill.step);
  for (const std::int64_t d : a.shape) put(d);
  for (const auto& [n, i] : a.fill.split) {
    put(n);
    put(i);
  }
  if (a.fill.pattern == FillPattern::kValues && a.fill.values) {
    for (const std::uint64_t v : *a.fill.values) put(v);  // at most limits::kMaxFillValues
  }
  return key;
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
  std::string key = contents_key(spec);
  if (const auto found = index_.find(key); found != index_.end()) {
    entries_.splice(entries_.begin(), entries_, found->second);
    return GmemArray(spec, entries_.front().bytes);
  }
  entries_.push_front(Entry{key, shared_fill_bytes(spec)});
  index_.emplace(std::move(key), entries_.begin());
  held_ += bytes;
  while (held_ > budget_ && entries_.size() > 1) {
    held_ -= static_cast<std::int64_t>(entries_.back().bytes->size());
    index_.erase(entries_.back().key);
    entries_.pop_back();
  }
  return GmemArray(spec, entries_.front().bytes);
}

}  // namespace collfuzz::sim
