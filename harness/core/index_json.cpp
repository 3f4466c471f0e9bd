#include "harness/core/index_json.h"

#include <algorithm>

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

using nlohmann::json;

namespace {

DynStart parse_dyn(const json& j, const std::string& path, std::int64_t dim,
                   const IndexAxisSize& axis_size, std::optional<std::int64_t>* size_out) {
  DynStart ds;
  const json* loop = jr::member(j, "loop");
  if (loop && jr::member(j, "axis")) {
    throw InputError(path,
                     "a dynamic index reads \"axis\" (lax.axis_index) or \"loop\" (a loop's "
                     "index), not both");
  }
  ds.loop = loop != nullptr;
  const std::string key = ds.loop ? "loop" : "axis";
  ds.axis = jr::identifier(jr::required(j, path, key.c_str()), path + "." + key);
  *size_out = axis_size(ds.axis, ds.loop, path + "." + key);
  if (const json* m = jr::member(j, "mul")) ds.mul = jr::integer(*m, path + ".mul", 0, dim);
  if (const json* a = jr::member(j, "add")) ds.add = jr::integer(*a, path + ".add", 0, dim - 1);
  // A mod past the dim may still keep every value in bounds: the bounds checks decide.
  if (const json* m = jr::member(j, "mod")) ds.mod = jr::integer(*m, path + ".mod", 1, 1 << 20);
  return ds;
}

}  // namespace

std::int64_t dyn_max(const DynStart& d, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t v = 0; v < n; ++v) best = std::max(best, dyn_value(d, v));
  return best;
}

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
  if (e.is_object() && (jr::member(e, "axis") || jr::member(e, "loop"))) {
    // ref.at[lax.axis_index(axis) * mul + add] (or a loop's index): in bounds for every value.
    jr::object(e, path, {"axis", "loop", "mul", "add", "mod"});
    ie.kind = IndexEntry::Kind::kAt;
    std::optional<std::int64_t> n;
    ie.dyn_start = parse_dyn(e, path, dim, axis_size, &n);
    if (!n) {
      throw InputError(path + ".axis", "the mesh gives the axis \"" + ie.dyn_start->axis +
                                           "\" no size; a dynamic integer index needs one");
    }
    const std::int64_t last = dyn_max(*ie.dyn_start, *n);
    if (last > dim - 1) {
      throw InputError(path, "the dynamic index reaches " + std::to_string(last) +
                                 (ie.dyn_start->loop ? " (loop index " : " (axis_index ") +
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
    jr::object(st, path + ".start", {"axis", "loop", "mul", "add", "mod"});
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

DynStart parse_loop_slot(const json& j, const std::string& path, std::int64_t extent,
                         const IndexAxisSize& axis_size) {
  if (!j.is_object() || !jr::member(j, "loop")) {
    throw InputError(path,
                     "a dynamic SMEM or barrier index reads a loop's index "
                     "({\"loop\": name, \"mul\", \"add\", \"mod\"})");
  }
  jr::object(j, path, {"loop", "mul", "add", "mod"});
  std::optional<std::int64_t> n;
  const DynStart d = parse_dyn(j, path, extent, axis_size, &n);
  const std::int64_t last = dyn_max(d, n.value_or(1));
  if (last > extent - 1) {
    throw InputError(path, "the slot reaches " + std::to_string(last) +
                               " on some trip of the loop, out of bounds of " +
                               std::to_string(extent) + "; a slot stays in bounds on every trip");
  }
  return d;
}

json dyn_to_json(const DynStart& d) {
  json j{{d.loop ? "loop" : "axis", d.axis}, {"mul", d.mul}, {"add", d.add}};
  if (d.mod > 0) j["mod"] = d.mod;
  return j;
}

json gmem_index_entry_to_json(const IndexEntry& e) {
  if (e.kind == IndexEntry::Kind::kAt) {
    if (!e.dyn_start) return e.at;
    return dyn_to_json(*e.dyn_start);
  }
  if (e.whole) return ":";
  if (e.dyn_start) return json{{"start", dyn_to_json(*e.dyn_start)}, {"size", e.size}};
  return json{{"start", e.start}, {"size", e.size}};
}

}  // namespace collfuzz
