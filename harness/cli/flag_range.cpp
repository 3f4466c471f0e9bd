#include "harness/cli/flag_range.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "harness/core/terminal_text.h"
#include "harness/executors/executor.h"

namespace collfuzz::cli {
namespace {

std::string number_text(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

std::string got(const std::string& value) { return ", got \"" + terminal_text(value) + "\""; }

template <typename T>
std::string check_integer(const std::string& value, T min, T max, const std::string& text) {
  T v{};
  const char* begin = value.data();
  const char* end = begin + value.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (value.empty() || ec == std::errc::invalid_argument || ptr != end)
    return "expected a whole number " + text + got(value);
  if (ec == std::errc::result_out_of_range || v < min || v > max)
    return "expected " + text + got(value);
  return {};
}

}  // namespace

FlagRange switch_flag() {
  return {"", [](const std::string&) { return std::string(); }};
}

FlagRange seconds(double min, double max, bool zero_allowed) {
  std::string text = (zero_allowed ? "0 (no limit) or " : "") + std::string("seconds from ") +
                     number_text(min) + " to " + number_text(max);
  return {text, [=](const std::string& value) -> std::string {
            // A plain decimal (1, 0.5, 2e3): no hex, no blanks, no inf or nan.
            const bool decimal =
                !value.empty() && value.find_first_not_of("0123456789.eE+-") == std::string::npos;
            char* end = nullptr;
            const double v = decimal ? std::strtod(value.c_str(), &end) : 0;
            if (!decimal || end != value.c_str() + value.size())
              return "expected a number: " + text + got(value);
            if (!std::isfinite(v)) return "expected a finite number: " + text + got(value);
            if (zero_allowed && v == 0) return {};
            if (v < min || v > max) return "expected " + text + got(value);
            return {};
          }};
}

FlagRange integer(std::int64_t min, std::int64_t max) {
  const std::string text = std::to_string(min) + " to " + std::to_string(max);
  return {text, [=](const std::string& value) { return check_integer(value, min, max, text); }};
}

FlagRange unsigned_integer(std::uint64_t min, std::uint64_t max) {
  const std::string text = std::to_string(min) + " to " + std::to_string(max);
  return {text, [=](const std::string& value) { return check_integer(value, min, max, text); }};
}

FlagRange shard_spec() {
  return {"I/N with 0 <= I < N", [](const std::string& value) -> std::string {
            const auto slash = value.find('/');
            const auto digits = [](const std::string& t) {
              return !t.empty() && t.size() <= 18 &&
                     t.find_first_not_of("0123456789") == std::string::npos;
            };
            if (slash == std::string::npos || !digits(value.substr(0, slash)) ||
                !digits(value.substr(slash + 1)))
              return "expected I/N with 0 <= I < N" + got(value);
            if (std::stoull(value.substr(0, slash)) >= std::stoull(value.substr(slash + 1)))
              return "expected I/N with 0 <= I < N" + got(value);
            return {};
          }};
}

FlagRange path() {
  return {"a non-empty path", [](const std::string& value) -> std::string {
            if (value.empty()) return "expected a non-empty path, got \"\"";
            return {};
          }};
}

FlagRange one_of(std::vector<std::string> values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  return {text, [=](const std::string& value) -> std::string {
            for (const auto& v : values) {
              if (v == value) return {};
            }
            return "expected " + text + got(value);
          }};
}

FlagRange executor_list() {
  std::vector<std::string> known = {"reference"};
  for (const auto& e : executor_registry()) known.emplace_back(e.name);
  std::string names;
  for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
  const std::string text = "a comma-separated list of distinct executors (" + names + ")";
  return {text, [=](const std::string& value) -> std::string {
            std::set<std::string> seen;
            std::size_t start = 0;
            while (true) {
              const std::size_t comma = value.find(',', start);
              const std::string item = value.substr(
                  start, comma == std::string::npos ? std::string::npos : comma - start);
              if (item.empty()) return "expected " + text + ": an item is empty" + got(value);
              bool ok = false;
              for (const auto& k : known) ok = ok || k == item;
              if (!ok) return "unknown executor \"" + terminal_text(item) + "\"; expected " + text;
              if (!seen.insert(item).second)
                return "executor \"" + item + "\" is named twice; expected " + text;
              if (comma == std::string::npos) break;
              start = comma + 1;
            }
            return {};
          }};
}

}  // namespace collfuzz::cli
