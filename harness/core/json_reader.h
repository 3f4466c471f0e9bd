// Strict reading of JSON values: every accessor knows the JSON path of what it reads and throws
// InputError naming that path on a wrong type, an out-of-range value or an unknown field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/errors.h"

namespace collfuzz::jr {

using json = nlohmann::json;

std::string key_path(const std::string& path, std::string_view key);
std::string index_path(const std::string& path, std::size_t i);

const char* type_name(const json& j);

// The object at `path`, with no keys outside `allowed`.
void object(const json& j, const std::string& path,
            std::initializer_list<std::string_view> allowed);
void array(const json& j, const std::string& path, std::size_t max_size);

// The member `key` of the object `j` (already checked with object()), or nullptr if absent.
const json* member(const json& j, std::string_view key);
const json& required(const json& j, const std::string& path, std::string_view key);

std::int64_t integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi);
std::uint64_t unsigned_integer(const json& j, const std::string& path);
bool boolean(const json& j, const std::string& path);
const std::string& string(const json& j, const std::string& path, std::size_t max_length);
// A Python identifier of at most limits::kMaxNameLength characters.
const std::string& identifier(const json& j, const std::string& path);

[[noreturn]] void unknown_choice(const std::string& path, const std::string& value,
                                 const std::vector<std::string_view>& expected);

template <typename Enum, std::size_t N>
Enum choice(const json& j, const std::string& path,
            const std::pair<std::string_view, Enum> (&options)[N]) {
  const std::string& s = string(j, path, 64);
  for (const auto& [name, value] : options) {
    if (s == name) return value;
  }
  std::vector<std::string_view> names;
  for (const auto& [name, value] : options) names.push_back(name);
  unknown_choice(path, s, names);
}

}  // namespace collfuzz::jr
