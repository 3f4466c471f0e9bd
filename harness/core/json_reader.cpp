#include "harness/core/json_reader.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "harness/core/limits.h"

namespace collfuzz::jr {

std::string key_path(const std::string& path, std::string_view key) {
  return path + "." + std::string(key);
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a non-integer number";
    default:
      return "an unsupported value";
  }
}

void object(const json& j, const std::string& path,
            std::initializer_list<std::string_view> allowed) {
  if (!j.is_object())
    throw InputError(path, std::string("expected an object, got ") + type_name(j));
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == key;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw InputError(key_path(path, key), "unknown field (allowed here: " + list + ")");
    }
  }
}

void array(const json& j, const std::string& path, std::size_t max_size) {
  if (!j.is_array()) throw InputError(path, std::string("expected an array, got ") + type_name(j));
  if (j.size() > max_size) {
    throw InputError(path, "array has " + std::to_string(j.size()) + " elements; at most " +
                               std::to_string(max_size) + " are allowed");
  }
}

const json* member(const json& j, std::string_view key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

const json& required(const json& j, const std::string& path, std::string_view key) {
  const json* m = member(j, key);
  if (!m) throw InputError(key_path(path, key), "missing required field");
  return *m;
}

std::int64_t integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi) {
  auto out_of_range = [&](const std::string& value) {
    return InputError(path, "value " + value + " is out of range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  };
  if (j.is_number_unsigned()) {
    // nlohmann reads every non-negative integer as unsigned: both bounds apply here too.
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        static_cast<std::int64_t>(u) < lo || static_cast<std::int64_t>(u) > hi) {
      throw out_of_range(std::to_string(u));
    }
    return static_cast<std::int64_t>(u);
  }
  if (j.is_number_float()) {
    // An integer beyond 64 bits reaches here as a double (e.g. 18446744073709551616).
    const double d = j.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d) throw out_of_range(j.dump());
  }
  if (!j.is_number_integer()) {
    throw InputError(path, std::string("expected an integer, got ") + type_name(j));
  }
  const auto v = j.get<std::int64_t>();
  if (v < lo || v > hi) throw out_of_range(std::to_string(v));
  return v;
}

std::uint64_t unsigned_integer(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(j.get<std::int64_t>());
  }
  if (j.is_number_integer() || (j.is_number_float() && std::isfinite(j.get<double>()) &&
                                std::trunc(j.get<double>()) == j.get<double>())) {
    throw InputError(path, "value " + j.dump() + " is out of range [0, 2^64-1]");
  }
  throw InputError(path, std::string("expected a non-negative integer, got ") + type_name(j));
}

bool boolean(const json& j, const std::string& path) {
  if (!j.is_boolean())
    throw InputError(path, std::string("expected a boolean, got ") + type_name(j));
  return j.get<bool>();
}

const std::string& string(const json& j, const std::string& path, std::size_t max_length) {
  if (!j.is_string()) throw InputError(path, std::string("expected a string, got ") + type_name(j));
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() > max_length) {
    throw InputError(path, "string is " + std::to_string(s.size()) + " characters; at most " +
                               std::to_string(max_length) + " are allowed");
  }
  return s;
}

const std::string& identifier(const json& j, const std::string& path) {
  const std::string& s = string(j, path, limits::kMaxNameLength);
  bool ok = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    throw InputError(path, "\"" + s +
                               "\" is not a name: use letters, digits and _, not starting "
                               "with a digit");
  }
  return s;
}

void unknown_choice(const std::string& path, const std::string& value,
                    const std::vector<std::string_view>& expected) {
  std::string list;
  for (auto e : expected) {
    if (!list.empty()) list += ", ";
    list += '"';
    list += e;
    list += '"';
  }
  throw InputError(path, "unknown value \"" + value + "\"; expected one of " + list);
}

}  // namespace collfuzz::jr
