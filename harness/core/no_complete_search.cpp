#include "harness/core/no_complete_search.h"

namespace collfuzz {

namespace {

std::vector<std::int64_t> prefix_sums(const std::vector<WarpArrival>& w) {
  std::vector<std::int64_t> sums{0};
  for (const WarpArrival& a : w) sums.push_back(sums.back() + a.hardware);
  return sums;
}

}  // namespace

std::optional<NoCompleteHit> no_complete_completion(
    const std::vector<std::vector<WarpArrival>>& warps, std::int64_t pending) {
  if (pending <= 0) return std::nullopt;
  // Every arrival is a multiple of 32 hardware arrivals: sums below `pending` by steps of 32.
  constexpr std::int64_t kStep = 32;
  const std::size_t cells = static_cast<std::size_t>((pending + kStep - 1) / kStep);
  for (std::size_t t = 0; t < warps.size(); ++t) {
    // The sums the other warps' prefixes reach below `pending`.
    std::vector<bool> reach(cells, false);
    reach[0] = true;
    for (std::size_t w = 0; w < warps.size(); ++w) {
      if (w == t) continue;
      const std::vector<std::int64_t> sums = prefix_sums(warps[w]);
      std::vector<bool> next(cells, false);
      for (std::size_t s = 0; s < cells; ++s) {
        if (!reach[s]) continue;
        for (const std::int64_t add : sums) {
          const std::int64_t v = static_cast<std::int64_t>(s) * kStep + add;
          if (v >= pending) break;
          next[static_cast<std::size_t>(v / kStep)] = true;
        }
      }
      reach = std::move(next);
    }
    const std::vector<std::int64_t> own = prefix_sums(warps[t]);
    for (std::size_t k = 0; k < warps[t].size(); ++k) {
      const WarpArrival& a = warps[t][k];
      if (!a.no_complete || own[k] >= pending) continue;
      for (std::size_t s = 0; s < cells; ++s) {
        const std::int64_t sum = static_cast<std::int64_t>(s) * kStep + own[k];
        if (reach[s] && sum < pending && sum + a.hardware >= pending)
          return NoCompleteHit{t, k, sum};
      }
    }
  }
  return std::nullopt;
}

}  // namespace collfuzz
