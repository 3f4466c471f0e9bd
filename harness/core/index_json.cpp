#include "harness/core/index_json.h"

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

using nlohmann::json;

namespace {

DynStart parse_dyn(const json& j, const std::string& path, std::int64_t dim,
                   const IndexAxisSize& axis_size, std::optional<std::int64_t>* size_out) {
  DynStart ds;
  ds.axis = jr::identifier(jr::required(j, path, "axis"), path + ".axis");
  *size_out = axis_size(ds.axis, path + ".axis");
  if (const json* m = jr::member(j, "mul")) ds.mul = jr::integer(*m, path + ".mul", 0, dim);
  if (const json* a = jr::member(j, "add")) ds.add = jr::integer(*a, path + ".add", 0, dim - 1);
  return ds;
}

}  // namespace

IndexEntry parse_gmem_index_entry(const json& e, const std::string& path, std::int64_t dim,
                                  const IndexAxisSize& axis_size) {
  IndexEntry ie;
  if (e.is_number()) {
    ie.kind = IndexEntry::Kind::kAt;
    ie.at = jr::integer(e, path, 0, dim - 1);
    return ie;
  }
  if (e.is_string()) {
    if (e.get_ref<const std::string&>() != ":") {
      throw InputError(path, "expected \":\" (the whole dimension), an integer or an object");
    }
    ie.kind = IndexEntry::Kind::kSlice;
    ie.whole = true;
    ie.start = 0;
    ie.size = dim;
    return ie;
  }
  if (e.is_object() && jr::member(e, "axis")) {
    // ref.at[lax.axis_index(axis) * mul + add]: in bounds for every index of the axis.
    jr::object(e, path, {"axis", "mul", "add"});
    ie.kind = IndexEntry::Kind::kAt;
    std::optional<std::int64_t> n;
    ie.dyn_start = parse_dyn(e, path, dim, axis_size, &n);
    if (!n) {
      throw InputError(path + ".axis", "the mesh gives the axis \"" + ie.dyn_start->axis +
                                           "\" no size; a dynamic integer index needs one");
    }
    const std::int64_t last = (*n - 1) * ie.dyn_start->mul + ie.dyn_start->add;
    if (last > dim - 1) {
      throw InputError(path, "the dynamic index reaches " + std::to_string(last) + " (axis_index " +
                                 std::to_string(*n - 1) +
                                 "), out of bounds of a dimension of size " + std::to_string(dim) +
                                 "; an integer index must stay in bounds");
    }
    return ie;
  }
  jr::object(e, path, {"start", "size"});
  ie.kind = IndexEntry::Kind::kSlice;
  ie.size = jr::integer(jr::required(e, path, "size"), path + ".size", 1, dim);
  const json& st = jr::required(e, path, "start");
  if (st.is_object()) {
    jr::object(st, path + ".start", {"axis", "mul", "add"});
    std::optional<std::int64_t> n;
    ie.dyn_start = parse_dyn(st, path + ".start", dim, axis_size, &n);
    return ie;
  }
  ie.start = jr::integer(st, path + ".start", 0, dim - 1);
  if (ie.start + ie.size > dim) {
    throw InputError(path, "the static slice [" + std::to_string(ie.start) + ", " +
                               std::to_string(ie.start + ie.size) +
                               ") is out of bounds of its dimension (size " + std::to_string(dim) +
                               "); out-of-bounds copies need a dynamic start");
  }
  return ie;
}

json gmem_index_entry_to_json(const IndexEntry& e) {
  if (e.kind == IndexEntry::Kind::kAt) {
    if (!e.dyn_start) return e.at;
    return json{{"axis", e.dyn_start->axis}, {"mul", e.dyn_start->mul}, {"add", e.dyn_start->add}};
  }
  if (e.whole) return ":";
  if (e.dyn_start) {
    return json{
        {"start",
         json{{"axis", e.dyn_start->axis}, {"mul", e.dyn_start->mul}, {"add", e.dyn_start->add}}},
        {"size", e.size}};
  }
  return json{{"start", e.start}, {"size", e.size}};
}

}  // namespace collfuzz
