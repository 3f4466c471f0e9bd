// Python repr()/str() of the values that JAX interpolates into its error messages.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/core/axis_name.h"

namespace collfuzz::py {

std::string repr_str(const std::string& s);                  // 'x'
std::string tuple_of_ints(std::span<const std::int64_t> v);  // (2,) (2, 1) ()
std::string list_of_ints(std::span<const std::int64_t> v);   // [3, 64] []
std::string tuple_of_names(std::span<const AxisName> v);     // ('x', 'y') ('x',) ()
std::string list_of_names(std::span<const AxisName> v);      // ['y', 'x'] []
std::string optional_int(const std::int64_t* v);             // 2 or None
std::string optional_name(const std::string* v);             // 'wg' or None

}  // namespace collfuzz::py
