#include "gpu/input_arena.h"

#include "gpu/plan_encoder.h"
#include "harness/core/fill.h"

namespace collfuzz::gpu {
namespace {

// What determines an input's bytes: shape, dtype and fill (not its name).
std::string contents_key(const ArraySpec& a) {
  std::string key = std::to_string(static_cast<int>(a.dtype)) + ":" +
                    std::to_string(static_cast<int>(a.fill.pattern)) + ":" +
                    std::to_string(a.fill.seed) + ":" + std::to_string(a.fill.value) + ":";
  for (const auto d : a.shape) key += std::to_string(d) + ",";
  return key;
}

constexpr std::uint64_t align256(std::uint64_t v) { return (v + 255) & ~std::uint64_t{255}; }

}  // namespace

std::optional<std::uint64_t> InputArena::place(const ArraySpec& spec, std::string& error) {
  error.clear();
  const std::string key = contents_key(spec);
  if (const auto it = offsets_.find(key); it != offsets_.end()) return it->second;
  const auto bytes =
      static_cast<std::uint64_t>(packed_bytes(element_count(spec.shape), spec.dtype));
  const auto guard = static_cast<std::uint64_t>(kInputGuardBytes);
  const std::uint64_t need = align256(guard + bytes + guard);
  if (need > capacity_) {
    error = "an input of " + std::to_string(bytes) + " bytes does not fit the " +
            std::to_string(capacity_) + "-byte input arena";
    return std::nullopt;
  }
  if (top_ + need > capacity_) return std::nullopt;
  const std::uint64_t offset = top_ + guard;
  error = upload_(offset, fill_bytes(spec));
  if (!error.empty()) return std::nullopt;
  ++uploads_;
  top_ += need;
  offsets_.emplace(key, offset);
  return offset;
}

void InputArena::clear() {
  offsets_.clear();
  top_ = 0;
}

}  // namespace collfuzz::gpu
