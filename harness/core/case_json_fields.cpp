// The case format's small fields: axis names, shapes, sizes, dtypes (case_json_fields.h).

#include "harness/core/case_json_fields.h"

#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"

namespace collfuzz::case_json {

using nlohmann::json;

AxisName parse_axis_name(const json& j, const std::string& path) {
  if (j.is_string()) return AxisName::plain(jr::identifier(j, path));
  if (!j.is_array()) {
    throw InputError(path, std::string("expected an axis name (a string, or an array of strings "
                                       "for a tuple), got ") +
                               jr::type_name(j));
  }
  jr::array(j, path, 8);
  if (j.empty()) throw InputError(path, "a tuple axis name needs at least one string");
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < j.size(); ++i) {
    parts.push_back(jr::identifier(j[i], jr::index_path(path, i)));
  }
  return AxisName::tuple(std::move(parts));
}

AxisNames parse_axis_names(const json& j, const std::string& path) {
  if (j.is_string()) return {parse_axis_name(j, path)};  // Python turns "x" into ("x",)
  jr::array(j, path, 8);
  AxisNames out;
  for (std::size_t i = 0; i < j.size(); ++i)
    out.push_back(parse_axis_name(j[i], jr::index_path(path, i)));
  return out;
}

json axis_name_to_json(const AxisName& a) {
  if (!a.is_tuple) return a.parts.front();
  return json(a.parts);
}

json axis_names_to_json(const AxisNames& names) {
  json out = json::array();
  for (const auto& a : names) out.push_back(axis_name_to_json(a));
  return out;
}

Shape parse_shape(const json& j, const std::string& path, std::size_t min_rank) {
  jr::array(j, path, limits::kMaxRank);
  if (j.size() < min_rank) {
    throw InputError(path, "shape needs at least " + std::to_string(min_rank) + " dimension(s)");
  }
  Shape s;
  for (std::size_t i = 0; i < j.size(); ++i) {
    s.push_back(jr::integer(j[i], jr::index_path(path, i), 1, limits::kMaxDim));
  }
  return s;
}

// Bytes of an array of `shape` and `dtype`, refusing anything over `max_bytes` before the
// product can overflow.
std::int64_t checked_bytes(const Shape& shape, DType dtype, std::int64_t max_bytes,
                           const std::string& path) {
  const std::int64_t max_elements = max_bytes * 8 / dtype_bits(dtype);
  std::int64_t elements = 1;
  for (std::int64_t d : shape) {
    if (d > max_elements / elements) {
      throw InputError(path, "array is larger than the limit of " + std::to_string(max_bytes) +
                                 " bytes (" + std::string(dtype_name(dtype)) + ")");
    }
    elements *= d;
  }
  return (elements * dtype_bits(dtype) + 7) / 8;
}

DType parse_dtype_field(const json& j, const std::string& path) {
  const std::string& s = jr::string(j, path, 64);
  if (auto d = parse_dtype(s)) return *d;
  std::string list;
  for (const auto& info : all_dtypes()) list += (list.empty() ? "" : ", ") + std::string(info.name);
  throw InputError(path, "unknown dtype \"" + s + "\"; expected one of " + list);
}

}  // namespace collfuzz::case_json
