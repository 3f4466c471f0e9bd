#include "harness/core/pyrepr.h"

namespace collfuzz {

std::string AxisName::str() const { return is_tuple ? repr() : parts.front(); }

std::string AxisName::repr() const {
  if (!is_tuple) return py::repr_str(parts.front());
  std::string out = "(";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ", ";
    out += py::repr_str(parts[i]);
  }
  if (parts.size() == 1) out += ",";
  return out + ")";
}

std::string AxisName::json_text() const {
  if (!is_tuple) return "\"" + parts.front() + "\"";
  std::string out = "[";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ",";
    out += "\"" + parts[i] + "\"";
  }
  return out + "]";
}

namespace py {

// Axis names are restricted to identifiers by the case parser, so no escaping is needed.
std::string repr_str(const std::string& s) { return "'" + s + "'"; }

namespace {
template <typename T, typename F>
std::string join(std::span<const T> v, const char* open, const char* close, bool tuple, F f) {
  std::string out = open;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += f(v[i]);
  }
  if (tuple && v.size() == 1) out += ",";
  return out + close;
}
}  // namespace

std::string tuple_of_ints(std::span<const std::int64_t> v) {
  return join(v, "(", ")", true, [](std::int64_t x) { return std::to_string(x); });
}
std::string list_of_ints(std::span<const std::int64_t> v) {
  return join(v, "[", "]", false, [](std::int64_t x) { return std::to_string(x); });
}
std::string tuple_of_names(std::span<const AxisName> v) {
  return join(v, "(", ")", true, [](const AxisName& a) { return a.repr(); });
}
std::string list_of_names(std::span<const AxisName> v) {
  return join(v, "[", "]", false, [](const AxisName& a) { return a.repr(); });
}
std::string optional_int(const std::int64_t* v) { return v ? std::to_string(*v) : "None"; }
std::string optional_name(const std::string* v) { return v ? repr_str(*v) : "None"; }

}  // namespace py
}  // namespace collfuzz
