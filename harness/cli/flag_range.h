// The allowed values of a command-line flag: one per row of flags.def. The parser checks every
// value against it before converting it (so `--seed -1` is refused, not wrapped, and `--seconds
// inf` never reaches a deadline), and a value outside it exits 2 with a message naming the flag and
// the range. docs/cli.md lists the ranges.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace collfuzz::cli {

struct FlagRange {
  std::string text;  // the allowed values in words ("1 to 64"), for --help and errors
  // "" when `value` is allowed; otherwise why not (the range, and the value as given).
  std::function<std::string(const std::string& value)> check;
};

inline constexpr double kMaxBudgetSeconds = 31'536'000;  // 365 days
inline constexpr double kMinSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 86'400;  // one day
inline constexpr std::int64_t kMaxCases = 1'000'000'000'000;
inline constexpr std::int64_t kMaxCount = 1'000'000'000;
inline constexpr std::int64_t kMaxSlowEvery = 1'000'000'000;

// Switches: no value.
FlagRange switch_flag();
// Seconds from `min` to `max`, finite; with `zero_allowed`, also 0 (no limit).
FlagRange seconds(double min, double max, bool zero_allowed);
// A decimal integer from `min` to `max` (no sign for an unsigned range, no exponent, no hex).
FlagRange integer(std::int64_t min, std::int64_t max);
FlagRange unsigned_integer(std::uint64_t min, std::uint64_t max);
// A non-empty path.
FlagRange path();
// One of `values`.
FlagRange one_of(std::vector<std::string> values);
// A comma-separated list of executor names: each known, none empty, none repeated.
FlagRange executor_list();
// "I/N": shard I of N, 0 <= I < N (campaign/shard.h checks the upper bound of N).
FlagRange shard_spec();

}  // namespace collfuzz::cli
