// Which cases a sampled (slow) executor runs in a campaign. An executor whose sample_every() is n
// runs a case when a hash of (case index, executor name) is 0 modulo n. The hash spreads the
// chosen cases evenly over the workers, whatever --jobs is (worker w runs indexes w, w + jobs,
// ...: the old rule `index % n == 0` sent every sampled case to worker 0 when jobs and n share a
// factor), and gives each executor its own cases. A function of the index only: a seed still
// gives the same campaign.
#pragma once

#include <cstdint>
#include <string_view>

#include "harness/core/fill.h"

namespace collfuzz::campaign {

// FNV-1a of the executor's name: its salt.
inline std::uint64_t sampling_salt(std::string_view executor) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char ch : executor) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Whether the executor with this salt runs case `index` when it samples one case in `every`.
inline bool sampled_case(std::uint64_t index, std::uint64_t salt, std::int64_t every) {
  if (every <= 1) return true;
  return splitmix64(index ^ salt) % static_cast<std::uint64_t>(every) == 0;
}

}  // namespace collfuzz::campaign
