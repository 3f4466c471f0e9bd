// A Pallas axis name: a Python string, or a tuple of strings (a "composite" name, or a group of
// axes, depending on where JAX reads it).
#pragma once

#include <compare>
#include <string>
#include <vector>

namespace collfuzz {

struct AxisName {
  std::vector<std::string> parts;  // one part for a plain string
  bool is_tuple = false;           // true: a Python tuple of strings

  static AxisName plain(std::string s) { return AxisName{{std::move(s)}, false}; }
  static AxisName tuple(std::vector<std::string> ps) { return AxisName{std::move(ps), true}; }

  const std::string& as_plain() const { return parts.front(); }

  std::string str() const;        // Python str(): x, or ('x', 'y')
  std::string repr() const;       // Python repr(): 'x', or ('x', 'y')
  std::string json_text() const;  // "x" or ["x","y"], for human-readable notes

  friend bool operator==(const AxisName&, const AxisName&) = default;
  friend auto operator<=>(const AxisName&, const AxisName&) = default;
};

using AxisNames = std::vector<AxisName>;

}  // namespace collfuzz
