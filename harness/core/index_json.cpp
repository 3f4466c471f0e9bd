#include "harness/core/index_json.h"

#include <algorithm>

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxPlusTerms = 4;

// The terms of "plus": [{"axis"|"loop": name, "mul": m}...], each with its size (appended to
// `sizes`).
void parse_plus(const json& j, const std::string& path, std::int64_t dim,
                const IndexAxisSize& axis_size, DynStart& ds,
                std::vector<std::optional<std::int64_t>>& sizes) {
  jr::array(j, path, kMaxPlusTerms);
  for (std::size_t k = 0; k < j.size(); ++k) {
    const std::string tp = jr::index_path(path, k);
    const json& t = j[k];
    if (!t.is_object()) throw InputError(tp, "expected a term {\"axis\" or \"loop\", \"mul\"}");
    jr::object(t, tp, {"axis", "loop", "mul"});
    DynTerm term;
    term.loop = jr::member(t, "loop") != nullptr;
    if (term.loop && jr::member(t, "axis"))
      throw InputError(tp, "a term reads \"axis\" or \"loop\", not both");
    const std::string key = term.loop ? "loop" : "axis";
    term.axis = jr::identifier(jr::required(t, tp, key.c_str()), tp + "." + key);
    sizes.push_back(axis_size(term.axis, term.loop, tp + "." + key));
    if (const json* m = jr::member(t, "mul")) term.mul = jr::integer(*m, tp + ".mul", 0, dim);
    ds.plus.push_back(std::move(term));
  }
}

DynStart parse_dyn(const json& j, const std::string& path, std::int64_t dim,
                   const IndexAxisSize& axis_size, std::optional<std::int64_t>* size_out,
                   std::vector<std::optional<std::int64_t>>* plus_sizes = nullptr) {
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
  if (const json* m = jr::member(j, "multiple_of")) {
    ds.multiple_of = jr::integer(*m, path + ".multiple_of", 1, 1 << 20);
  }
  if (const json* p = jr::member(j, "plus")) {
    if (!plus_sizes) throw InputError(path + ".plus", "a slot reads one loop index, no sum");
    parse_plus(*p, path + ".plus", dim, axis_size, ds, *plus_sizes);
  }
  return ds;
}

// The sizes of every term of a dynamic index (its own first), or the first term without one.
std::optional<std::vector<std::int64_t>> all_sizes(
    const std::optional<std::int64_t>& own, const std::vector<std::optional<std::int64_t>>& plus) {
  std::vector<std::int64_t> out;
  if (!own) return std::nullopt;
  out.push_back(*own);
  for (const auto& s : plus) {
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

}  // namespace

std::int64_t dyn_max(const DynStart& d, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t v = 0; v < n; ++v) best = std::max(best, dyn_value(d, v));
  return best;
}

std::int64_t dyn_max(const DynStart& d, const std::vector<std::int64_t>& sizes) {
  if (d.plus.empty()) return dyn_max(d, sizes.at(0));
  // Every mul is at least 0: without a mod the sum peaks where every term does.
  std::int64_t peak = d.add + (sizes.at(0) - 1) * d.mul;
  for (std::size_t k = 0; k < d.plus.size(); ++k) peak += (sizes.at(k + 1) - 1) * d.plus[k].mul;
  if (d.mod == 0) return peak;
  std::int64_t combos = 1;
  for (const std::int64_t n : sizes) combos = std::min<std::int64_t>(combos * n, 1 << 20);
  if (combos >= (1 << 16)) return std::min(peak, d.mod - 1);  // a bound, not the exact peak
  std::int64_t best = 0;
  for (std::int64_t c = 0; c < combos; ++c) {
    std::int64_t rest = c;
    std::int64_t x = d.add;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      x += (rest % sizes[k]) * (k == 0 ? d.mul : d.plus[k - 1].mul);
      rest /= sizes[k];
    }
    best = std::max(best, x % d.mod);
  }
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
    jr::object(e, path, {"axis", "loop", "mul", "add", "mod", "plus", "multiple_of"});
    ie.kind = IndexEntry::Kind::kAt;
    std::optional<std::int64_t> n;
    std::vector<std::optional<std::int64_t>> plus_n;
    ie.dyn_start = parse_dyn(e, path, dim, axis_size, &n, &plus_n);
    const auto sizes = all_sizes(n, plus_n);
    if (!sizes) {
      throw InputError(path + ".axis", "the mesh gives an axis of \"" + ie.dyn_start->axis +
                                           "\"'s index no size; a dynamic integer index needs one");
    }
    const std::int64_t last = dyn_max(*ie.dyn_start, *sizes);
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
    jr::object(st, path + ".start", {"axis", "loop", "mul", "add", "mod", "plus", "multiple_of"});
    std::optional<std::int64_t> n;
    std::vector<std::optional<std::int64_t>> plus_n;
    ie.dyn_start = parse_dyn(st, path + ".start", dim, axis_size, &n, &plus_n);
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
  if (d.multiple_of > 0) j["multiple_of"] = d.multiple_of;
  if (!d.plus.empty()) {
    json plus = json::array();
    for (const DynTerm& t : d.plus)
      plus.push_back({{t.loop ? "loop" : "axis", t.axis}, {"mul", t.mul}});
    j["plus"] = plus;
  }
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
