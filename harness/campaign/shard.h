// A shard of a campaign: part I of N of one seed's case stream, so that N machines (a Slurm array,
// a Kubernetes Indexed Job, GitLab's parallel:, a GitHub Actions matrix) run disjoint cases of the
// same seed. Shard I of N runs global case indices I, I + N, I + 2N, ...; inside a shard the
// worker processes split that stream further as before (worker k of J runs the shard's k-th,
// (k+J)-th, ... case). The union of the N shards is the unsharded stream, case for case.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace collfuzz::campaign {

inline constexpr std::uint64_t kMaxShards = 1'000'000;

struct Shard {
  std::uint64_t index = 0;  // 0-based
  std::uint64_t count = 1;
  std::string source = "default";  // "--shard", or the environment variable(s) it came from

  // The global case index of the shard's `local`-th case, and back.
  std::uint64_t global(std::uint64_t local) const { return local * count + index; }
  std::uint64_t local(std::uint64_t global) const { return global / count; }
  bool sharded() const { return count > 1; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }

  nlohmann::json to_json() const;
};

// Parses "I/N" (0 <= I < N <= kMaxShards); throws InputError naming `field` on anything else.
Shard parse_shard(const std::string& field, const std::string& value);

// The shard the engine running this process assigns, from its environment, or nullopt when none
// does. In order: COLLFUZZ_SHARD=I/N (any engine; the GitHub Actions matrix convention);
// SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (minus SLURM_ARRAY_TASK_MIN when set);
// JOB_COMPLETION_INDEX / COLLFUZZ_SHARD_COUNT (Kubernetes Indexed Jobs);
// CI_NODE_INDEX (1-based) / CI_NODE_TOTAL (GitLab parallel:). A variable that is set but bad
// throws InputError naming it. `getenv` is injectable for tests.
std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& getenv);
std::optional<Shard> shard_from_environment();

// The explicit flag when given, else the environment's, else 0/1.
Shard resolve_shard(const std::string& flag);

}  // namespace collfuzz::campaign
