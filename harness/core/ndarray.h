// Row-major N-d arrays of packed elements: flat indices and box copies. Used to resolve GMEM
// slices and expected-outcome regions; executors model their own data movement.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/limits.h"

namespace collfuzz {

std::vector<std::int64_t> row_major_strides(const Shape& shape);
// The same without an allocation, for the hot paths: a parsed shape has at most kMaxRank dims;
// entries past shape.size() are 0.
using RankStrides = std::array<std::int64_t, limits::kMaxRank>;
RankStrides row_major_rank_strides(const Shape& shape);

// Calls f(coords) for every coordinate of `shape`, in row-major order.
void for_each_coord(const Shape& shape,
                    const std::function<void(const std::vector<std::int64_t>&)>& f);

// A GMEM index resolved for one CTA: per source dim, its start and size (size 0 marks a squeezed
// dim), plus the shape of the result (squeezed dims dropped).
struct ResolvedSlice {
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> size;  // 0: squeezed
  Shape shape;
};

// `axis_index(name)` gives the index of this CTA/thread along a cluster or thread axis;
// `loop_iteration` the trip of the enclosing loop (the value of a loop-index entry).
ResolvedSlice resolve_slice(const Shape& array_shape, const std::vector<IndexEntry>& index,
                            const std::function<std::int64_t(const std::string&)>& axis_index,
                            std::int64_t loop_iteration);

}  // namespace collfuzz
