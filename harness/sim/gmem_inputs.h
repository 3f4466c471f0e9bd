// The GMEM inputs of a case, filled as docs/case-format.md says. Arrays up to 4 MiB are filled
// whole and kept in a small cache keyed by their shape, dtype and fill (a fuzzing campaign and a
// benchmark reuse the same inputs, as a GPU executor keeps them resident); larger ones are read
// element by element.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::sim {

class GmemArray {
 public:
  GmemArray(const ArraySpec& spec, std::shared_ptr<const std::vector<std::uint8_t>> bytes);
  std::int64_t elements() const { return elements_; }
  int bits() const { return bits_; }
  // Element i (0 <= i < elements()), as raw bits.
  std::uint64_t element(std::int64_t i) const;
  // The packed bytes, when the array is materialised; nullptr otherwise.
  const std::uint8_t* bytes() const { return bytes_ ? bytes_->data() : nullptr; }

 private:
  const ArraySpec* spec_;
  std::shared_ptr<const std::vector<std::uint8_t>> bytes_;
  std::int64_t elements_ = 0;
  int bits_ = 8;
};

class GmemInputCache {
 public:
  explicit GmemInputCache(std::int64_t budget_bytes = std::int64_t{64} << 20)
      : budget_(budget_bytes) {}
  GmemArray array(const ArraySpec& spec);

 private:
  struct Entry {
    std::string key;  // shape, dtype and fill: what decides the contents
    std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  };
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::int64_t budget_;
  std::int64_t held_ = 0;
};

}  // namespace collfuzz::sim
