// Size limits of a case. Everything is checked at parse time, before anything is allocated, so a
// hostile case file is refused with a message instead of exhausting memory (docs/case-format.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace collfuzz::limits {

inline constexpr int kMaxRank = 8;
inline constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;
inline constexpr std::int64_t kMaxArrayBytes = std::int64_t{64} << 20;        // one input/output
inline constexpr std::int64_t kMaxTotalArrayBytes = std::int64_t{256} << 20;  // all of them
inline constexpr std::int64_t kMaxAllocBytes = std::int64_t{4} << 20;         // one SMEM/GMEM alloc
inline constexpr std::int64_t kMaxTotalAllocBytes = std::int64_t{8} << 20;    // all allocs, one CTA
inline constexpr std::int64_t kMaxGridDim = (std::int64_t{1} << 31) - 1;
inline constexpr int kMaxGridRank = 6;
// The product of the grid dims: far past any launchable grid, and small enough that the grid times
// the cluster times the threads (2^40 * 64 * 64) cannot overflow 64 bits in the reference.
inline constexpr std::int64_t kMaxGridBlocks = std::int64_t{1} << 40;
inline constexpr int kMaxClusterRank = 6;
inline constexpr std::int64_t kMaxClusterSize = 64;  // product of the cluster dims
inline constexpr std::int64_t kMaxNumThreads = 64;
inline constexpr std::int64_t kMaxOps = 1000;
inline constexpr int kMaxDepth = 16;
inline constexpr std::int64_t kMaxAllocsPerScope = 64;
inline constexpr std::int64_t kMaxNumBarriers = 1024;
inline constexpr std::int64_t kMaxAbsArrivals = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxAbsIndexValue = std::int64_t{1} << 31;
inline constexpr int kMaxNameLength = 64;
inline constexpr int kMaxCaseNameLength = 200;
inline constexpr int kMaxCondDepth = 8;
// Elements of one input's explicit `values` fill (what `collfuzz import` stores for an argument
// that is no recipe fill, such as a jax.random array).
inline constexpr std::int64_t kMaxFillValues = 65536;

// The JSON reader (bounded_json_reader.h), for every JSON input: case, outcome, baseline and
// campaign state files, and executor answer lines. Checked while reading, so a hostile input costs
// at most about 100 bytes of memory per element: kMaxJsonElements bounds the DOM to ~100 MB.
inline constexpr std::int64_t kMaxJsonBytes = std::int64_t{64} << 20;  // a file or a line
inline constexpr int kMaxJsonDepth = 64;                               // nested arrays/objects
inline constexpr std::int64_t kMaxJsonElements = 1'000'000;            // values, all levels
inline constexpr std::int64_t kMaxJsonStringBytes = std::int64_t{32} << 20;  // one string or key
// A diagnostic's alternatives (Diagnostic::alternatives): the reference lists at most this many.
inline constexpr std::size_t kMaxDiagnosticAlternatives = 4096;

}  // namespace collfuzz::limits
