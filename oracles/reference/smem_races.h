// Racing SMEM writes. Two Pallas threads of a block that copy into one thread-collective buffer,
// or two CTAs whose copies land on the same bytes of one CTA, are ordered by nothing the
// reference models (interpret mode runs Pallas threads and CTAs as Python threads; on the hardware
// the TMA writes of different issuers land as they please). A byte that two writers leave with
// different values holds whichever came last: the prediction marks it undefined, so its buffer
// and any output stored from it are not compared. Writes of one writer, or of the same value,
// stay defined. The mark sticks until the allocation is made anew.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace collfuzz::ref {

// Per byte of an SMEM memory (Memory::writers): the writer of its last write, kSmemNoWriter when
// nothing wrote it since it was allocated, kSmemRacy once two writers left it with different
// values. A writer is a CTA rank and Pallas thread made one number, plus one.
inline constexpr std::uint16_t kSmemNoWriter = 0;
inline constexpr std::uint16_t kSmemRacy = 0xFFFF;

inline std::uint16_t smem_writer(std::int64_t rank, std::int64_t num_threads, std::int64_t thread) {
  return static_cast<std::uint16_t>(rank * num_threads + thread + 1);
}

// Bytes [lo, hi) of a memory, all written last by `writer`. A memory keeps such spans while they
// are few and no two writers' spans meet (the common case: one writer, or a multicast's disjoint
// chunks); then it keeps each byte's writer.
struct SmemSpan {
  std::size_t lo = 0;
  std::size_t hi = 0;
  std::uint16_t writer = kSmemNoWriter;
};
inline constexpr std::size_t kSmemMaxSpans = 64;

// Whether bytes [lo, hi) meet a span of another writer.
inline bool smem_spans_meet_another(const std::vector<SmemSpan>& spans, std::size_t lo,
                                    std::size_t hi, std::uint16_t writer) {
  return std::any_of(spans.begin(), spans.end(), [&](const SmemSpan& s) {
    return s.writer != writer && s.lo < hi && lo < s.hi;
  });
}

// Records that `writer` wrote bytes [lo, hi) (joined to its last span when they touch).
inline void smem_add_span(std::vector<SmemSpan>& spans, std::size_t lo, std::size_t hi,
                          std::uint16_t writer) {
  if (!spans.empty() && spans.back().writer == writer && spans.back().hi == lo) {
    spans.back().hi = hi;
    return;
  }
  spans.push_back(SmemSpan{lo, hi, writer});
}

// Each byte's writer (of a memory of n bytes), from its spans; the spans are dropped.
inline void smem_writers_of(std::vector<SmemSpan>& spans, std::vector<std::uint16_t>& writers,
                            std::size_t n) {
  writers.assign(n, kSmemNoWriter);
  for (const SmemSpan& s : spans)
    std::fill(writers.begin() + static_cast<std::ptrdiff_t>(s.lo),
              writers.begin() + static_cast<std::ptrdiff_t>(s.hi), s.writer);
  spans.clear();
}

// Bytes [lo, hi) have no writer any more (a new allocation took them).
inline void smem_forget_writers(std::vector<SmemSpan>& spans, std::vector<std::uint16_t>& writers,
                                std::size_t lo, std::size_t hi) {
  if (!writers.empty()) {
    std::fill(writers.begin() + static_cast<std::ptrdiff_t>(lo),
              writers.begin() + static_cast<std::ptrdiff_t>(hi), kSmemNoWriter);
    return;
  }
  std::vector<SmemSpan> kept;
  for (const SmemSpan& s : spans) {
    if (s.hi <= lo || hi <= s.lo) {
      kept.push_back(s);
      continue;
    }
    if (s.lo < lo) kept.push_back(SmemSpan{s.lo, lo, s.writer});
    if (hi < s.hi) kept.push_back(SmemSpan{hi, s.hi, s.writer});
  }
  spans = std::move(kept);
}

// Whether any of n bytes was last written by another writer than `writer` (or races).
inline bool smem_other_writer(const std::uint16_t* writers, std::size_t n, std::uint16_t writer) {
  bool other = false;
  for (std::size_t b = 0; b < n; ++b) other |= writers[b] != kSmemNoWriter && writers[b] != writer;
  return other;
}

// After one write by `writer` over n bytes: `before` holds them before it, `now` after,
// `writers` their writers and `undef` their undefined marks. A byte the write changed whose last
// writer is another becomes racy; a racy byte stays undefined whatever the write did; any other
// byte the write changed is the writer's. Returns whether any byte is racy.
inline bool settle_smem_write(std::uint16_t* writers, std::uint8_t* undef,
                              const std::uint8_t* before, const std::uint8_t* now, std::size_t n,
                              std::uint16_t writer) {
  bool racy = false;
  for (std::size_t b = 0; b < n; ++b) {
    std::uint16_t& w = writers[b];
    if (w != kSmemRacy && before[b] != now[b])
      w = (w != kSmemNoWriter && w != writer) ? kSmemRacy : writer;
    if (w == kSmemRacy) {
      undef[b] = 1;
      racy = true;
    }
  }
  return racy;
}

}  // namespace collfuzz::ref
