// One CTA's dynamic shared memory as bytes, pre-filled with the sentinel 0xA5 at kernel start, with
// a mark per byte for contents that undefined behaviour wrote (kept only once such a write
// happens).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/core/outcome.h"

namespace collfuzz::sim {

class SharedMemory {
 public:
  void reset(std::int64_t bytes) {
    bytes_.assign(static_cast<std::size_t>(bytes), kSmemSentinel);  // keeps its capacity
    undefined_.clear();
  }
  std::uint8_t* data() { return bytes_.data(); }
  // Hands the bytes over (the next reset allocates anew).
  std::vector<std::uint8_t> release() { return std::move(bytes_); }
  const std::uint8_t* data() const { return bytes_.data(); }
  std::int64_t size() const { return static_cast<std::int64_t>(bytes_.size()); }

  // Marks bytes [offset, offset + n) as written by defined (false) or undefined (true) data.
  void mark(std::int64_t offset, std::int64_t n, bool undefined) {
    if (!undefined && undefined_.empty()) return;
    if (undefined_.empty()) undefined_.assign(bytes_.size(), 0);
    std::fill_n(undefined_.begin() + offset, n, undefined ? 1 : 0);
  }
  bool undefined(std::int64_t offset) const {
    return !undefined_.empty() && undefined_[static_cast<std::size_t>(offset)] != 0;
  }
  bool has_marks() const { return !undefined_.empty(); }
  // Copies the marks of [offset, offset + n) from `other` (same offset).
  void copy_marks(const SharedMemory& other, std::int64_t offset, std::int64_t n) {
    if (!other.has_marks() && !has_marks()) return;
    if (!other.has_marks()) {
      mark(offset, n, false);
      return;
    }
    if (undefined_.empty()) undefined_.assign(bytes_.size(), 0);
    std::copy_n(other.undefined_.begin() + offset, n, undefined_.begin() + offset);
  }
  bool any_undefined(std::int64_t offset, std::int64_t n) const {
    if (undefined_.empty()) return false;
    const auto first = undefined_.begin() + offset;
    return std::any_of(first, first + n, [](std::uint8_t u) { return u != 0; });
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint8_t> undefined_;
};

// Packed elements: little-endian, 4-bit elements two per byte with the lower index in the low
// nibble.
inline std::uint64_t load_packed(const std::uint8_t* base, int bits, std::int64_t i) {
  if (bits == 4) {
    const std::uint8_t b = base[i / 2];
    return (i % 2) ? (b >> 4) : (b & 0xF);
  }
  std::uint64_t v = 0;
  const int n = bits / 8;
  for (int k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(base[i * n + k]) << (8 * k);
  return v;
}

inline void store_packed(std::uint8_t* base, int bits, std::int64_t i, std::uint64_t v) {
  if (bits == 4) {
    std::uint8_t& b = base[i / 2];
    b = (i % 2) ? static_cast<std::uint8_t>((b & 0x0F) | ((v & 0xF) << 4))
                : static_cast<std::uint8_t>((b & 0xF0) | (v & 0xF));
    return;
  }
  const int n = bits / 8;
  for (int k = 0; k < n; ++k) base[i * n + k] = static_cast<std::uint8_t>(v >> (8 * k));
}

// The byte range holding elements [first, first + count) of a packed array.
inline std::int64_t packed_byte(int bits, std::int64_t element) { return element * bits / 8; }
inline std::int64_t packed_span(int bits, std::int64_t first, std::int64_t count) {
  return (first + count) * bits / 8 + ((first + count) * bits % 8 ? 1 : 0) - first * bits / 8;
}

}  // namespace collfuzz::sim
