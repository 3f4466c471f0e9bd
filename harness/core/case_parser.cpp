// The case reader: the case's top level, its mesh, its target and its arrays (case_parser.h).

#include "harness/core/case_parser.h"

#include "harness/core/case_json_fields.h"
#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/scratch_shapes.h"
#include "harness/core/warp_map.h"

namespace collfuzz::case_json {

Case CaseParser::parse(const json& j) {
  const std::string root = "$";
  jr::object(
      j, root,
      {"format", "name", "notes", "mesh", "target", "inputs", "outputs", "program", "expect"});
  c_.format = static_cast<int>(jr::integer(jr::required(j, root, "format"), "$.format", 1, 1));
  c_.name = jr::string(jr::required(j, root, "name"), "$.name", limits::kMaxCaseNameLength);
  if (c_.name.empty()) throw InputError("$.name", "the case name must not be empty");
  if (const json* n = jr::member(j, "notes")) c_.notes = jr::string(*n, "$.notes", 1 << 16);
  parse_mesh(jr::required(j, root, "mesh"), "$.mesh");
  parse_target(jr::required(j, root, "target"), "$.target");
  std::int64_t total = 0;
  if (const json* in = jr::member(j, "inputs"))
    parse_arrays(*in, "$.inputs", true, c_.inputs, total);
  if (const json* out = jr::member(j, "outputs"))
    parse_arrays(*out, "$.outputs", false, c_.outputs, total);
  c_.program = parse_body(jr::required(j, root, "program"), "$.program", 0);
  return std::move(c_);
}

void CaseParser::parse_mesh(const json& j, const std::string& path) {
  jr::object(j, path,
             {"grid", "grid_names", "cluster", "cluster_names", "num_threads", "thread_name"});
  Mesh& m = c_.mesh;
  if (const json* g = jr::member(j, "grid")) {
    jr::array(*g, path + ".grid", limits::kMaxGridRank);
    std::int64_t blocks = 1;
    for (std::size_t i = 0; i < g->size(); ++i) {
      m.grid.push_back(
          jr::integer((*g)[i], jr::index_path(path + ".grid", i), 1, limits::kMaxGridDim));
      if (m.grid.back() > limits::kMaxGridBlocks / blocks) {
        throw InputError(path + ".grid", "the grid has more than " +
                                             std::to_string(limits::kMaxGridBlocks) +
                                             " blocks (the product of its dims)");
      }
      blocks *= m.grid.back();
    }
  }
  if (const json* g = jr::member(j, "grid_names"))
    m.grid_names = parse_axis_names(*g, path + ".grid_names");
  if (const json* cl = jr::member(j, "cluster")) {
    jr::array(*cl, path + ".cluster", limits::kMaxClusterRank);
    std::int64_t product = 1;
    for (std::size_t i = 0; i < cl->size(); ++i) {
      const auto d =
          jr::integer((*cl)[i], jr::index_path(path + ".cluster", i), 1, limits::kMaxClusterSize);
      product *= d;
      if (product > limits::kMaxClusterSize) {
        throw InputError(path + ".cluster", "the cluster has more than " +
                                                std::to_string(limits::kMaxClusterSize) + " CTAs");
      }
      m.cluster.push_back(d);
    }
  }
  if (const json* cn = jr::member(j, "cluster_names")) {
    m.cluster_names = parse_axis_names(*cn, path + ".cluster_names");
  }
  if (const json* nt = jr::member(j, "num_threads"); nt && !nt->is_null()) {
    m.num_threads = jr::integer(*nt, path + ".num_threads", 1, limits::kMaxNumThreads);
  }
  if (const json* tn = jr::member(j, "thread_name"); tn && !tn->is_null()) {
    m.thread_name = jr::identifier(*tn, path + ".thread_name");
  }
}

void CaseParser::parse_target(const json& j, const std::string& path) {
  jr::object(j, path, {"arch", "semantics", "entry", "profile", "jax"});
  Target& t = c_.target;
  t.arch = jr::choice(jr::required(j, path, "arch"), path + ".arch", kArchs);
  if (const json* s = jr::member(j, "semantics"))
    t.semantics = jr::choice(*s, path + ".semantics", kSemantics);
  if (const json* e = jr::member(j, "entry")) t.entry = jr::choice(*e, path + ".entry", kEntries);
  if (const json* p = jr::member(j, "profile"))
    t.profile = jr::choice(*p, path + ".profile", kProfiles);
  if (const json* v = jr::member(j, "jax")) {
    t.jax = require_jax_version(jr::string(*v, path + ".jax", 32), path + ".jax");
    t.jax_pinned = true;
  }
  if (t.entry == Entry::kPallasCall &&
      (!c_.mesh.cluster.empty() || !c_.mesh.cluster_names.empty() || !c_.mesh.grid_names.empty() ||
       c_.mesh.num_threads || c_.mesh.thread_name)) {
    throw InputError(
        path + ".entry",
        "a pallas_call entry has a grid without axis names, no cluster and no thread axis; "
        "leave mesh.grid_names, cluster, cluster_names, num_threads and thread_name empty");
  }
}

void CaseParser::claim_name(const std::string& name, const std::string& path) {
  if (!global_names_.insert(name).second) {
    throw InputError(path, "the name \"" + name +
                               "\" is used twice (arrays and allocations need "
                               "distinct names)");
  }
}

void CaseParser::parse_arrays(const json& j, const std::string& path, bool is_input,
                              std::vector<ArraySpec>& out, std::int64_t& total) {
  jr::array(j, path, 64);
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = jr::index_path(path, i);
    if (is_input) {
      jr::object(j[i], p, {"name", "shape", "dtype", "fill"});
    } else {
      jr::object(j[i], p, {"name", "shape", "dtype"});
    }
    ArraySpec a;
    a.name = jr::identifier(jr::required(j[i], p, "name"), p + ".name");
    claim_name(a.name, p + ".name");
    a.shape = parse_shape(jr::required(j[i], p, "shape"), p + ".shape", 1);
    a.dtype = parse_dtype_field(jr::required(j[i], p, "dtype"), p + ".dtype");
    total += checked_bytes(a.shape, a.dtype, limits::kMaxArrayBytes, p + ".shape");
    if (total > limits::kMaxTotalArrayBytes) {
      throw InputError(p + ".shape", "the arrays of this case exceed the limit of " +
                                         std::to_string(limits::kMaxTotalArrayBytes) + " bytes");
    }
    if (const json* f = jr::member(j[i], "fill")) a.fill = parse_fill(*f, p + ".fill", a);
    out.push_back(std::move(a));
  }
}

const Alloc* CaseParser::lookup_alloc(const std::string& name, const std::string& path) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    if (auto f = it->find(name); f != it->end()) return f->second;
  }
  throw InputError(path, "no allocation named \"" + name + "\" is in scope here");
}

const ArraySpec& CaseParser::lookup_array(const std::vector<ArraySpec>& arrays,
                                          const std::string& name, const std::string& path,
                                          const char* what) const {
  for (const auto& a : arrays) {
    if (a.name == name) return a;
  }
  throw InputError(path, std::string("no ") + what + " named \"" + name + "\"");
}

}  // namespace collfuzz::case_json
