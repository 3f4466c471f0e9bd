#include "harness/campaign/shard.h"

#include <charconv>
#include <cstdlib>

#include "harness/core/errors.h"

namespace collfuzz::campaign {
namespace {

std::optional<std::uint64_t> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::uint64_t env_number(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* v = getenv(name);
  const auto n = parse_count(v ? v : "");
  if (!n) {
    throw InputError(name,
                     std::string("expected a non-negative integer, got '") + (v ? v : "") + "'");
  }
  return *n;
}

Shard checked(Shard s, const std::string& field) {
  if (s.count < 1 || s.count > kMaxShards) {
    throw InputError(field, "expected a shard count from 1 to " + std::to_string(kMaxShards) +
                                ", got " + std::to_string(s.count));
  }
  if (s.index >= s.count) {
    throw InputError(field, "shard index " + std::to_string(s.index) + " is not below the count " +
                                std::to_string(s.count) + " (indices are 0-based)");
  }
  return s;
}

}  // namespace

nlohmann::json Shard::to_json() const {
  return {{"index", index}, {"count", count}, {"source", source}};
}

Shard parse_shard(const std::string& field, const std::string& value) {
  const auto slash = value.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : parse_count(value.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parse_count(value.substr(slash + 1));
  if (!i || !n)
    throw InputError(field, "expected I/N (shard I of N, 0-based), got '" + value + "'");
  Shard s;
  s.index = *i;
  s.count = *n;
  s.source = field;
  return checked(s, field);
}

std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& getenv) {
  const auto set = [&](const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (set("COLLFUZZ_SHARD")) return parse_shard("COLLFUZZ_SHARD", getenv("COLLFUZZ_SHARD"));
  if (set("SLURM_ARRAY_TASK_ID")) {
    if (!set("SLURM_ARRAY_TASK_COUNT"))
      throw InputError("SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_ID is set but the count is not");
    Shard s;
    s.index = env_number(getenv, "SLURM_ARRAY_TASK_ID");
    s.count = env_number(getenv, "SLURM_ARRAY_TASK_COUNT");
    // sbatch --array=1-4 numbers tasks from 1: the index is relative to the array's first task.
    if (set("SLURM_ARRAY_TASK_MIN")) {
      const std::uint64_t min = env_number(getenv, "SLURM_ARRAY_TASK_MIN");
      if (s.index < min) throw InputError("SLURM_ARRAY_TASK_ID", "below SLURM_ARRAY_TASK_MIN");
      s.index -= min;
    }
    s.source = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT";
    return checked(s, "SLURM_ARRAY_TASK_ID");
  }
  if (set("JOB_COMPLETION_INDEX")) {
    if (!set("COLLFUZZ_SHARD_COUNT"))
      throw InputError("COLLFUZZ_SHARD_COUNT",
                       "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job): set "
                       "COLLFUZZ_SHARD_COUNT to the Job's completions");
    Shard s;
    s.index = env_number(getenv, "JOB_COMPLETION_INDEX");
    s.count = env_number(getenv, "COLLFUZZ_SHARD_COUNT");
    s.source = "JOB_COMPLETION_INDEX/COLLFUZZ_SHARD_COUNT";
    return checked(s, "JOB_COMPLETION_INDEX");
  }
  if (set("CI_NODE_INDEX")) {
    if (!set("CI_NODE_TOTAL"))
      throw InputError("CI_NODE_TOTAL", "CI_NODE_INDEX is set but CI_NODE_TOTAL is not");
    Shard s;
    const std::uint64_t one_based = env_number(getenv, "CI_NODE_INDEX");
    if (one_based == 0) throw InputError("CI_NODE_INDEX", "GitLab's node index is 1-based, got 0");
    s.index = one_based - 1;
    s.count = env_number(getenv, "CI_NODE_TOTAL");
    s.source = "CI_NODE_INDEX/CI_NODE_TOTAL";
    return checked(s, "CI_NODE_INDEX");
  }
  return std::nullopt;
}

std::optional<Shard> shard_from_environment() {
  return shard_from_environment([](const char* name) { return std::getenv(name); });
}

Shard resolve_shard(const std::string& flag) {
  if (!flag.empty()) return parse_shard("--shard", flag);
  return shard_from_environment().value_or(Shard{});
}

}  // namespace collfuzz::campaign
