// A fuzzer's input bytes read as a sequence of choices (like LLVM's FuzzedDataProvider, which a
// GCC build does not have): each choice takes the next byte(s) modulo its range, and 0 once the
// input runs out. A mutation of one byte changes one choice, which is what makes the case target
// structure-aware.
#pragma once

#include <cstddef>
#include <cstdint>

namespace collfuzz::fuzz {

class ChoiceBytes {
 public:
  ChoiceBytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  // A value in [0, n) (n >= 1).
  std::uint64_t below(std::uint64_t n) {
    std::uint64_t v = next();
    if (n > 256) v = v << 8 | next();
    return v % n;
  }
  bool flag() { return below(2) == 1; }
  // One of the values of an enum with `n` enumerators.
  template <typename E>
  E pick(std::uint64_t n) {
    return static_cast<E>(below(n));
  }
  bool empty() const { return pos_ >= size_; }

 private:
  std::uint64_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace collfuzz::fuzz
