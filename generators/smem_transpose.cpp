// The permutation of a copy destination's TransposeChoice (docs/case-format.md, "Transposed SMEM
// refs").
#include "generators/smem_transpose.h"

#include <algorithm>
#include <numeric>

namespace collfuzz::generators {

// The permutation a plan's TransposeChoice gives a destination of dst's rank; nullopt where it
// is the identity (rank 2 for kLeading, rank 1).
std::optional<SmemTranspose> transpose_for(const CopyPlan& plan, const Shape& dst) {
  const std::size_t n = dst.size();
  if (plan.transpose == TransposeChoice::kNone || n < 2) return std::nullopt;
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), std::int64_t{0});
  if (plan.transpose == TransposeChoice::kMovesLast) {
    std::swap(p[n - 2], p[n - 1]);
  } else if (plan.transpose == TransposeChoice::kRotate) {
    // (1, 2, 0, ...); (1, 2, 0) and (1, 0) move the last dim.
    std::rotate(p.begin(), p.begin() + 1,
                p.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(n, 3)));
  } else if (n >= 3) {
    std::swap(p[0], p[1]);
  } else {
    return std::nullopt;
  }
  return SmemTranspose{p, plan.transpose_ref};
}

}  // namespace collfuzz::generators
