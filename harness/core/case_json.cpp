#include "harness/core/case_json.h"

#include <map>
#include <set>

#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/scratch_shapes.h"
#include "harness/core/warp_map.h"

namespace collfuzz {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------
// Small pieces

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

constexpr std::pair<std::string_view, Arch> kArchs[] = {
    {"sm_80", Arch::kSm80}, {"sm_90a", Arch::kSm90a}, {"sm_100a", Arch::kSm100a}};
constexpr std::pair<std::string_view, Semantics> kSemantics[] = {
    {"lane", Semantics::kLane}, {"warpgroup", Semantics::kWarpgroup}};
constexpr std::pair<std::string_view, Entry> kEntries[] = {{"kernel", Entry::kKernel},
                                                           {"pallas_call", Entry::kPallasCall}};
constexpr std::pair<std::string_view, Profile> kProfiles[] = {{"mosaic", Profile::kMosaic},
                                                              {"interpret", Profile::kInterpret}};
constexpr std::pair<std::string_view, FillPattern> kPatterns[] = {
    {"iota", FillPattern::kIota},
    {"random", FillPattern::kRandom},
    {"constant", FillPattern::kConstant}};
constexpr std::pair<std::string_view, AllocKind> kAllocKinds[] = {
    {"smem", AllocKind::kSmem},
    {"barrier", AllocKind::kBarrier},
    {"cluster_barrier", AllocKind::kClusterBarrier},
    {"acc", AllocKind::kAcc},
    {"gmem", AllocKind::kGmem},
    {"semaphore", AllocKind::kSemaphore},
    {"tmem", AllocKind::kTmem}};
constexpr std::pair<std::string_view, SemaphoreKind> kSemaphoreKinds[] = {
    {"regular", SemaphoreKind::kRegular}, {"barrier", SemaphoreKind::kBarrier}};
constexpr std::pair<std::string_view, OobMode> kOobModes[] = {
    {"undefined", OobMode::kUndefined},
    {"promise_in_bounds", OobMode::kPromiseInBounds},
    {"zeros", OobMode::kZeros}};
constexpr std::pair<std::string_view, CmpOp> kCmpOps[] = {{"eq", CmpOp::kEq}, {"ne", CmpOp::kNe},
                                                          {"lt", CmpOp::kLt}, {"le", CmpOp::kLe},
                                                          {"gt", CmpOp::kGt}, {"ge", CmpOp::kGe}};

template <typename Enum, std::size_t N>
const char* name_of(Enum v, const std::pair<std::string_view, Enum> (&options)[N]) {
  for (const auto& [name, value] : options) {
    if (value == v) return name.data();
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// The parser proper: one instance per case, carrying the names in scope.

class CaseParser {
 public:
  Case parse(const json& j) {
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

 private:
  Case c_;
  std::set<std::string> global_names_;  // arrays and allocations: unique in a case
  std::vector<std::map<std::string, const Alloc*>> scopes_;  // allocations visible here
  std::int64_t op_count_ = 0;
  bool in_loop_ = false;
  std::vector<std::string> warp_axes_;  // the axes of the warp_maps around the op being parsed
  static constexpr std::int64_t kMaxTripCount = 256;
  static constexpr std::int64_t kMaxLoopSteps = 1024;
  std::int64_t alloc_bytes_ = 0;

  void parse_mesh(const json& j, const std::string& path) {
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
          throw InputError(
              path + ".cluster",
              "the cluster has more than " + std::to_string(limits::kMaxClusterSize) + " CTAs");
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

  void parse_target(const json& j, const std::string& path) {
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
        (!c_.mesh.cluster.empty() || !c_.mesh.cluster_names.empty() ||
         !c_.mesh.grid_names.empty() || c_.mesh.num_threads || c_.mesh.thread_name)) {
      throw InputError(
          path + ".entry",
          "a pallas_call entry has a grid without axis names, no cluster and no thread axis; "
          "leave mesh.grid_names, cluster, cluster_names, num_threads and thread_name empty");
    }
  }

  void claim_name(const std::string& name, const std::string& path) {
    if (!global_names_.insert(name).second) {
      throw InputError(path, "the name \"" + name +
                                 "\" is used twice (arrays and allocations need "
                                 "distinct names)");
    }
  }

  void parse_arrays(const json& j, const std::string& path, bool is_input,
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
      if (const json* f = jr::member(j[i], "fill")) {
        const std::string fp = p + ".fill";
        jr::object(*f, fp, {"pattern", "seed", "value"});
        a.fill.pattern = jr::choice(jr::required(*f, fp, "pattern"), fp + ".pattern", kPatterns);
        if (const json* s = jr::member(*f, "seed"))
          a.fill.seed = jr::unsigned_integer(*s, fp + ".seed");
        if (const json* v = jr::member(*f, "value")) {
          a.fill.value =
              jr::integer(*v, fp + ".value", -(std::int64_t{1} << 31), (std::int64_t{1} << 31) - 1);
        }
      }
      out.push_back(std::move(a));
    }
  }

  // ---- ops

  Body parse_body(const json& j, const std::string& path, int depth) {
    if (depth > limits::kMaxDepth) {
      throw InputError(path,
                       "ops are nested more than " + std::to_string(limits::kMaxDepth) + " deep");
    }
    jr::array(j, path, static_cast<std::size_t>(limits::kMaxOps));
    Body body;
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (++op_count_ > limits::kMaxOps) {
        throw InputError(jr::index_path(path, i),
                         "the program has more than " + std::to_string(limits::kMaxOps) + " ops");
      }
      body.push_back(parse_op(j[i], jr::index_path(path, i), depth));
    }
    return body;
  }

  Op parse_op(const json& j, const std::string& path, int depth) {
    if (!j.is_object())
      throw InputError(path, std::string("expected an op object, got ") + jr::type_name(j));
    const std::string& kind = jr::string(jr::required(j, path, "op"), path + ".op", 64);
    Op op;
    op.path = path;
    if (kind == "run_scoped") {
      op.v = parse_run_scoped(j, path, depth);
    } else if (kind == "copy_gmem_to_smem") {
      op.v = parse_copy_g2s(j, path);
    } else if (kind == "copy_smem_to_gmem") {
      op.v = parse_copy_s2g(j, path);
    } else if (kind == "barrier_arrive") {
      jr::object(j, path, {"op", "barrier"});
      op.v = BarrierArrive{
          parse_barrier_use(jr::required(j, path, "barrier"), path + ".barrier", false)};
    } else if (kind == "barrier_wait") {
      jr::object(j, path, {"op", "barrier"});
      op.v = BarrierWait{
          parse_barrier_use(jr::required(j, path, "barrier"), path + ".barrier", false)};
    } else if (kind == "loop") {
      op.v = parse_loop(j, path, depth);
    } else if (kind == "warp_map") {
      op.v = parse_warp_map(j, path, depth);
    } else if (kind == "when") {
      jr::object(j, path, {"op", "cond", "body"});
      When w;
      w.cond = parse_cond(jr::required(j, path, "cond"), path + ".cond", 0);
      w.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
      op.v = std::move(w);
    } else {
      throw InputError(path + ".op",
                       "unknown op \"" + kind +
                           "\"; expected run_scoped, copy_gmem_to_smem, "
                           "copy_smem_to_gmem, barrier_arrive, barrier_wait, when, loop or "
                           "warp_map");
    }
    if (!warp_axes_.empty()) check_in_warp_map(kind, path);
    return op;
  }

  // warp_map (warp_map.h): its axis is usable by lax.axis_index in the body only.
  WarpMap parse_warp_map(const json& j, const std::string& path, int depth) {
    jr::object(j, path, {"op", "axis", "body"});
    WarpMap wm;
    wm.axis = jr::identifier(jr::required(j, path, "axis"), path + ".axis");
    check_warp_map_target(c_.target, path);
    warp_axes_.push_back(wm.axis);
    wm.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
    warp_axes_.pop_back();
    check_warp_map_body(wm, c_.inputs);
    return wm;
  }

  Loop parse_loop(const json& j, const std::string& path, int depth) {
    jr::object(j, path, {"op", "trip_count", "body"});
    if (in_loop_) {
      throw InputError(path + ".op",
                       "loops do not nest (a loop's body holds copies, waits, "
                       "arrivals and when)");
    }
    Loop l;
    l.trip_count =
        jr::integer(jr::required(j, path, "trip_count"), path + ".trip_count", 1, kMaxTripCount);
    const std::int64_t ops_before = op_count_;
    in_loop_ = true;
    l.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
    in_loop_ = false;
    if ((op_count_ - ops_before) * l.trip_count > kMaxLoopSteps) {
      throw InputError(path + ".trip_count",
                       "the loop runs " + std::to_string(op_count_ - ops_before) + " ops " +
                           std::to_string(l.trip_count) + " times, more than " +
                           std::to_string(kMaxLoopSteps) + " op executions");
    }
    return l;
  }

  RunScoped parse_run_scoped(const json& j, const std::string& path, int depth) {
    if (in_loop_) {
      throw InputError(path + ".op",
                       "a loop's body holds no run_scoped (allocate outside the loop)");
    }
    jr::object(j, path, {"op", "collective_axes", "allocs", "body"});
    RunScoped rs;
    if (const json* ca = jr::member(j, "collective_axes")) {
      rs.collective_axes = parse_axis_names(*ca, path + ".collective_axes");
    }
    const json& allocs = jr::required(j, path, "allocs");
    jr::array(allocs, path + ".allocs", static_cast<std::size_t>(limits::kMaxAllocsPerScope));
    for (std::size_t i = 0; i < allocs.size(); ++i) {
      rs.allocs.push_back(parse_alloc(allocs[i], jr::index_path(path + ".allocs", i)));
    }
    // The allocations are visible in the body only (pl.run_scoped's lexical scope). Pointers into
    // rs.allocs stay valid: the vector is not modified while the body is parsed.
    std::map<std::string, const Alloc*> scope;
    for (const auto& a : rs.allocs) scope[a.name] = &a;
    scopes_.push_back(std::move(scope));
    rs.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
    scopes_.pop_back();
    return rs;
  }

  Alloc parse_alloc(const json& j, const std::string& path) {
    if (!j.is_object())
      throw InputError(path, std::string("expected an allocation object, got ") + jr::type_name(j));
    Alloc a;
    a.kind = jr::choice(jr::required(j, path, "kind"), path + ".kind", kAllocKinds);
    switch (a.kind) {
      case AllocKind::kSmem:
      case AllocKind::kAcc:
      case AllocKind::kGmem:
        jr::object(j, path, {"name", "kind", "shape", "dtype"});
        break;
      case AllocKind::kTmem:
        jr::object(j, path, {"name", "kind", "shape", "dtype", "collective"});
        break;
      case AllocKind::kBarrier:
        jr::object(j, path, {"name", "kind", "num_arrivals", "num_barriers", "orders_tensor_core"});
        break;
      case AllocKind::kClusterBarrier:
        jr::object(j, path,
                   {"name", "kind", "collective_axes", "num_arrivals", "num_barriers",
                    "orders_tensor_core", "leader_tracked"});
        break;
      case AllocKind::kSemaphore:
        jr::object(j, path, {"name", "kind", "type", "shape"});
        break;
    }
    a.name = jr::identifier(jr::required(j, path, "name"), path + ".name");
    claim_name(a.name, path + ".name");
    switch (a.kind) {
      case AllocKind::kSmem:
      case AllocKind::kAcc:
      case AllocKind::kGmem:
      case AllocKind::kTmem: {
        a.shape = parse_shape(jr::required(j, path, "shape"), path + ".shape", 1);
        a.dtype = parse_dtype_field(jr::required(j, path, "dtype"), path + ".dtype");
        alloc_bytes_ += checked_bytes(a.shape, a.dtype, limits::kMaxAllocBytes, path + ".shape");
        if (alloc_bytes_ > limits::kMaxTotalAllocBytes) {
          throw InputError(path + ".shape", "the allocations of this case exceed the limit of " +
                                                std::to_string(limits::kMaxTotalAllocBytes) +
                                                " bytes");
        }
        if (const json* col = jr::member(j, "collective"))
          a.collective = jr::boolean(*col, path + ".collective");
        break;
      }
      case AllocKind::kBarrier:
      case AllocKind::kClusterBarrier: {
        if (const json* n = jr::member(j, "num_arrivals")) {
          a.num_arrivals = jr::integer(*n, path + ".num_arrivals", -limits::kMaxAbsArrivals,
                                       limits::kMaxAbsArrivals);
        }
        if (const json* n = jr::member(j, "num_barriers")) {
          if (n->is_array()) {  // JAX's default `()`: one barrier, a 0-d ref
            jr::array(*n, path + ".num_barriers", 0);
            a.scalar_ref = true;
          } else {
            a.num_barriers = jr::integer(*n, path + ".num_barriers", 1, limits::kMaxNumBarriers);
          }
        }
        if (const json* o = jr::member(j, "orders_tensor_core")) {
          a.orders_tensor_core = jr::boolean(*o, path + ".orders_tensor_core");
        }
        if (a.kind == AllocKind::kClusterBarrier) {
          a.collective_axes =
              parse_axis_names(jr::required(j, path, "collective_axes"), path + ".collective_axes");
          if (const json* l = jr::member(j, "leader_tracked"))
            a.leader_tracked = jr::boolean(*l, path + ".leader_tracked");
        }
        break;
      }
      case AllocKind::kSemaphore:
        a.semaphore = jr::choice(jr::required(j, path, "type"), path + ".type", kSemaphoreKinds);
        a.shape = parse_shape(jr::required(j, path, "shape"), path + ".shape", 0);
        checked_bytes(a.shape, DType::kInt32, limits::kMaxAllocBytes, path + ".shape");
        break;
    }
    return a;
  }

  const Alloc* lookup_alloc(const std::string& name, const std::string& path) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto f = it->find(name); f != it->end()) return f->second;
    }
    throw InputError(path, "no allocation named \"" + name + "\" is in scope here");
  }

  const ArraySpec& lookup_array(const std::vector<ArraySpec>& arrays, const std::string& name,
                                const std::string& path, const char* what) const {
    for (const auto& a : arrays) {
      if (a.name == name) return a;
    }
    throw InputError(path, std::string("no ") + what + " named \"" + name + "\"");
  }

  BarrierUse parse_barrier_use(const json& j, const std::string& path, bool plain_barrier_only) {
    jr::object(j, path, {"alloc", "index"});
    BarrierUse b;
    b.alloc = jr::identifier(jr::required(j, path, "alloc"), path + ".alloc");
    const Alloc* a = lookup_alloc(b.alloc, path + ".alloc");
    if (plain_barrier_only
            ? a->kind != AllocKind::kBarrier
            : (a->kind != AllocKind::kBarrier && a->kind != AllocKind::kClusterBarrier)) {
      throw InputError(path + ".alloc",
                       "\"" + b.alloc + "\" is a " + to_string(a->kind) + " allocation, not " +
                           (plain_barrier_only ? "a barrier" : "a barrier or cluster_barrier"));
    }
    if (const json* i = jr::member(j, "index")) {
      if (a->scalar_ref) {
        throw InputError(path + ".index", "\"" + b.alloc +
                                              "\" is a 0-d barrier (num_barriers: []); it is used "
                                              "without an index");
      }
      b.index = jr::integer(*i, path + ".index", 0, a->num_barriers - 1);
    }
    return b;
  }

  // Leading integer indices into an SMEM allocation; returns the shape that remains.
  Shape parse_smem_index(const json* j, const std::string& path, const Alloc& a,
                         std::vector<std::int64_t>& out) {
    if (!j) return a.shape;
    jr::array(*j, path, a.shape.size() - 1);
    for (std::size_t i = 0; i < j->size(); ++i) {
      out.push_back(jr::integer((*j)[i], jr::index_path(path, i), 0, a.shape[i] - 1));
    }
    return Shape(a.shape.begin() + static_cast<std::ptrdiff_t>(out.size()), a.shape.end());
  }

  // lax.axis_index(axis) is used by conditions and dynamic indices: it must name exactly one
  // cluster axis or the thread axis.
  // Returns the axis's size where the mesh gives one.
  std::optional<std::int64_t> check_index_axis(const std::string& axis,
                                               const std::string& path) const {
    // Inside a warp_map, its axis names the warp (JAX resolves it first).
    if (!warp_axes_.empty() && warp_axes_.back() == axis) return kWarpsPerWarpgroup;
    const Mesh& m = c_.mesh;
    std::optional<std::int64_t> size;
    int matches = 0;
    if (m.thread_name && *m.thread_name == axis) {
      ++matches;
      size = m.num_threads;
    }
    for (std::size_t i = 0; i < m.cluster_names.size(); ++i) {
      const AxisName& n = m.cluster_names[i];
      if (n.is_tuple || n.as_plain() != axis) continue;
      ++matches;
      size = i < m.cluster.size() ? std::optional<std::int64_t>(m.cluster[i]) : std::nullopt;
    }
    if (matches == 1) return size;
    if (matches > 1) {
      throw InputError(path, "\"" + axis +
                                 "\" names more than one axis of the mesh; conditions and dynamic "
                                 "indices need an unambiguous axis");
    }
    throw InputError(path, "\"" + axis +
                               "\" is not a cluster axis or the thread axis of the mesh "
                               "(conditions and dynamic indices may use only those)");
  }

  // GMEM indexing (index_json.h); returns the shape of the indexed ref (squeezed dims dropped).
  Shape parse_gmem_index(const json* j, const std::string& path, const ArraySpec& arr,
                         std::vector<IndexEntry>& out) {
    Shape result;
    const std::size_t n = j ? j->size() : 0;
    if (j) jr::array(*j, path, arr.shape.size());
    const IndexAxisSize axis_size = [this](const std::string& axis, const std::string& p) {
      return check_index_axis(axis, p);
    };
    for (std::size_t i = 0; i < arr.shape.size(); ++i) {
      if (i >= n) {
        result.push_back(arr.shape[i]);
        continue;
      }
      IndexEntry ie =
          parse_gmem_index_entry((*j)[i], jr::index_path(path, i), arr.shape[i], axis_size);
      if (ie.kind == IndexEntry::Kind::kSlice) result.push_back(ie.size);
      out.push_back(std::move(ie));
    }
    return result;
  }

  Cond parse_cond(const json& j, const std::string& path, int depth) {
    if (depth > limits::kMaxCondDepth) throw InputError(path, "condition is nested too deeply");
    Cond c;
    if (j.is_boolean()) {
      c.kind = Cond::Kind::kConst;
      c.constant = j.get<bool>();
      return c;
    }
    if (!j.is_object())
      throw InputError(path, std::string("expected a condition, got ") + jr::type_name(j));
    if (const json* all = jr::member(j, "all")) {
      jr::object(j, path, {"all"});
      c.kind = Cond::Kind::kAll;
      jr::array(*all, path + ".all", 16);
      for (std::size_t i = 0; i < all->size(); ++i) {
        c.children.push_back(parse_cond((*all)[i], jr::index_path(path + ".all", i), depth + 1));
      }
      return c;
    }
    if (const json* any = jr::member(j, "any")) {
      jr::object(j, path, {"any"});
      c.kind = Cond::Kind::kAny;
      jr::array(*any, path + ".any", 16);
      for (std::size_t i = 0; i < any->size(); ++i) {
        c.children.push_back(parse_cond((*any)[i], jr::index_path(path + ".any", i), depth + 1));
      }
      return c;
    }
    if (const json* n = jr::member(j, "not")) {
      jr::object(j, path, {"not"});
      c.kind = Cond::Kind::kNot;
      c.children.push_back(parse_cond(*n, path + ".not", depth + 1));
      return c;
    }
    jr::object(j, path, {"axis", "eq", "ne", "lt", "le", "gt", "ge"});
    c.kind = Cond::Kind::kAtom;
    c.axis = jr::identifier(jr::required(j, path, "axis"), path + ".axis");
    check_index_axis(c.axis, path + ".axis");
    int n_ops = 0;
    for (const auto& [name, op] : kCmpOps) {
      if (const json* v = jr::member(j, name)) {
        ++n_ops;
        c.op = op;
        c.value = jr::integer(*v, path + "." + std::string(name), -limits::kMaxAbsIndexValue,
                              limits::kMaxAbsIndexValue);
      }
    }
    if (n_ops != 1)
      throw InputError(path, "a condition needs exactly one of eq, ne, lt, le, gt, ge");
    return c;
  }

  CopyGmemToSmem parse_copy_g2s(const json& j, const std::string& path) {
    jr::object(j, path,
               {"op", "src", "dst", "barrier", "collective_axes", "leader_tracked", "oob_mode",
                "predicate"});
    CopyGmemToSmem cp;
    const json& src = jr::required(j, path, "src");
    jr::object(src, path + ".src", {"input", "index"});
    cp.src = jr::identifier(jr::required(src, path + ".src", "input"), path + ".src.input");
    const ArraySpec& in = lookup_array(c_.inputs, cp.src, path + ".src.input", "input");
    parse_gmem_index(jr::member(src, "index"), path + ".src.index", in, cp.src_index);

    const json& dst = jr::required(j, path, "dst");
    jr::object(dst, path + ".dst", {"alloc", "index"});
    cp.dst = jr::identifier(jr::required(dst, path + ".dst", "alloc"), path + ".dst.alloc");
    const Alloc* d = lookup_alloc(cp.dst, path + ".dst.alloc");
    if (d->kind != AllocKind::kSmem) {
      throw InputError(path + ".dst.alloc",
                       "\"" + cp.dst + "\" is a " + to_string(d->kind) +
                           " allocation; the destination must be an smem allocation");
    }
    parse_smem_index(jr::member(dst, "index"), path + ".dst.index", *d, cp.dst_index);

    if (const json* b = jr::member(j, "barrier"); b && !b->is_null()) {
      cp.barrier = parse_barrier_use(*b, path + ".barrier", true);
    }
    if (const json* ca = jr::member(j, "collective_axes"); ca && !ca->is_null()) {
      cp.collective_axes = parse_axis_names(*ca, path + ".collective_axes");
    }
    if (const json* lt = jr::member(j, "leader_tracked"); lt && !lt->is_null()) {
      const std::string lp = path + ".leader_tracked";
      if (lt->is_string()) {
        if (lt->get<std::string>() != "replicated") {
          throw InputError(lp, "expected \"replicated\" or {\"partitioned\": axis}");
        }
        cp.leader_tracked = LeaderTracked::kReplicated;
      } else {
        jr::object(*lt, lp, {"partitioned"});
        cp.leader_tracked = LeaderTracked::kPartitioned;
        cp.partition_axis = jr::integer(jr::required(*lt, lp, "partitioned"), lp + ".partitioned",
                                        0, limits::kMaxRank - 1);
      }
    }
    if (const json* m = jr::member(j, "oob_mode"); m && !m->is_null()) {
      cp.oob_mode = jr::choice(*m, path + ".oob_mode", kOobModes);
    }
    if (const json* p = jr::member(j, "predicate"); p && !p->is_null()) {
      cp.predicate = parse_cond(*p, path + ".predicate", 0);
    }
    return cp;
  }

  CopySmemToGmem parse_copy_s2g(const json& j, const std::string& path) {
    jr::object(j, path, {"op", "src", "dst"});
    CopySmemToGmem cp;
    const json& src = jr::required(j, path, "src");
    jr::object(src, path + ".src", {"alloc", "index"});
    cp.src = jr::identifier(jr::required(src, path + ".src", "alloc"), path + ".src.alloc");
    const Alloc* s = lookup_alloc(cp.src, path + ".src.alloc");
    if (s->kind != AllocKind::kSmem) {
      throw InputError(path + ".src.alloc",
                       "\"" + cp.src + "\" is a " + to_string(s->kind) +
                           " allocation; the source must be an smem allocation");
    }
    const Shape src_shape =
        parse_smem_index(jr::member(src, "index"), path + ".src.index", *s, cp.src_index);
    const json& dst = jr::required(j, path, "dst");
    jr::object(dst, path + ".dst", {"output", "index"});
    cp.dst = jr::identifier(jr::required(dst, path + ".dst", "output"), path + ".dst.output");
    const ArraySpec& out = lookup_array(c_.outputs, cp.dst, path + ".dst.output", "output");
    const Shape dst_shape =
        parse_gmem_index(jr::member(dst, "index"), path + ".dst.index", out, cp.dst_index);
    for (const auto& e : cp.dst_index) {
      if (e.dyn_start && e.kind == IndexEntry::Kind::kSlice) {
        throw InputError(path + ".dst.index",
                         "copy_smem_to_gmem takes static slices and integer indices (static, or "
                         "from lax.axis_index)");
      }
    }
    if (out.dtype != s->dtype || dst_shape != src_shape) {
      throw InputError(path + ".dst",
                       "the output slice must have the shape and dtype of the smem source");
    }
    return cp;
  }
};

// ---------------------------------------------------------------------------------------------
// Serialisation

json cond_to_json(const Cond& c) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      return c.constant;
    case Cond::Kind::kAtom:
      return json{{"axis", c.axis}, {name_of(c.op, kCmpOps), c.value}};
    case Cond::Kind::kAll:
    case Cond::Kind::kAny: {
      json arr = json::array();
      for (const auto& ch : c.children) arr.push_back(cond_to_json(ch));
      return json{{c.kind == Cond::Kind::kAll ? "all" : "any", arr}};
    }
    case Cond::Kind::kNot:
      return json{{"not", cond_to_json(c.children.front())}};
  }
  return nullptr;
}

json gmem_index_to_json(const std::vector<IndexEntry>& index) {
  json out = json::array();
  for (const auto& e : index) out.push_back(gmem_index_entry_to_json(e));
  return out;
}

json barrier_use_to_json(const BarrierUse& b) {
  json out{{"alloc", b.alloc}};
  if (b.index) out["index"] = *b.index;
  return out;
}

json alloc_to_json(const Alloc& a) {
  json out{{"name", a.name}, {"kind", name_of(a.kind, kAllocKinds)}};
  switch (a.kind) {
    case AllocKind::kSmem:
    case AllocKind::kAcc:
    case AllocKind::kGmem:
    case AllocKind::kTmem:
      out["shape"] = a.shape;
      out["dtype"] = std::string(dtype_name(a.dtype));
      if (a.kind == AllocKind::kTmem) out["collective"] = a.collective;
      break;
    case AllocKind::kBarrier:
    case AllocKind::kClusterBarrier:
      if (a.kind == AllocKind::kClusterBarrier) {
        out["collective_axes"] = axis_names_to_json(a.collective_axes);
        if (a.leader_tracked) out["leader_tracked"] = true;
      }
      out["num_arrivals"] = a.num_arrivals;
      if (a.scalar_ref) {
        out["num_barriers"] = json::array();
      } else if (a.num_barriers != 1) {
        out["num_barriers"] = a.num_barriers;
      }
      if (a.orders_tensor_core) out["orders_tensor_core"] = true;
      break;
    case AllocKind::kSemaphore:
      out["type"] = name_of(a.semaphore, kSemaphoreKinds);
      out["shape"] = a.shape;
      break;
  }
  return out;
}

json body_to_json(const Body& body);

json op_to_json(const Op& op) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, RunScoped>) {
          json out{{"op", "run_scoped"}};
          if (!v.collective_axes.empty())
            out["collective_axes"] = axis_names_to_json(v.collective_axes);
          json allocs = json::array();
          for (const auto& a : v.allocs) allocs.push_back(alloc_to_json(a));
          out["allocs"] = allocs;
          out["body"] = body_to_json(v.body);
          return out;
        } else if constexpr (std::is_same_v<T, CopyGmemToSmem>) {
          json out{{"op", "copy_gmem_to_smem"}};
          out["src"] = json{{"input", v.src}};
          if (!v.src_index.empty()) out["src"]["index"] = gmem_index_to_json(v.src_index);
          out["dst"] = json{{"alloc", v.dst}};
          if (!v.dst_index.empty()) out["dst"]["index"] = v.dst_index;
          if (v.barrier) out["barrier"] = barrier_use_to_json(*v.barrier);
          if (v.collective_axes) out["collective_axes"] = axis_names_to_json(*v.collective_axes);
          if (v.leader_tracked == LeaderTracked::kReplicated) out["leader_tracked"] = "replicated";
          if (v.leader_tracked == LeaderTracked::kPartitioned) {
            out["leader_tracked"] = json{{"partitioned", v.partition_axis}};
          }
          if (v.oob_mode) out["oob_mode"] = name_of(*v.oob_mode, kOobModes);
          if (v.predicate) out["predicate"] = cond_to_json(*v.predicate);
          return out;
        } else if constexpr (std::is_same_v<T, CopySmemToGmem>) {
          json out{{"op", "copy_smem_to_gmem"}};
          out["src"] = json{{"alloc", v.src}};
          if (!v.src_index.empty()) out["src"]["index"] = v.src_index;
          out["dst"] = json{{"output", v.dst}};
          if (!v.dst_index.empty()) out["dst"]["index"] = gmem_index_to_json(v.dst_index);
          return out;
        } else if constexpr (std::is_same_v<T, BarrierArrive>) {
          return json{{"op", "barrier_arrive"}, {"barrier", barrier_use_to_json(v.barrier)}};
        } else if constexpr (std::is_same_v<T, BarrierWait>) {
          return json{{"op", "barrier_wait"}, {"barrier", barrier_use_to_json(v.barrier)}};
        } else if constexpr (std::is_same_v<T, Loop>) {
          return json{{"op", "loop"}, {"trip_count", v.trip_count}, {"body", body_to_json(v.body)}};
        } else if constexpr (std::is_same_v<T, WarpMap>) {
          return json{{"op", "warp_map"}, {"axis", v.axis}, {"body", body_to_json(v.body)}};
        } else {
          return json{
              {"op", "when"}, {"cond", cond_to_json(v.cond)}, {"body", body_to_json(v.body)}};
        }
      },
      op.v);
}

json body_to_json(const Body& body) {
  json out = json::array();
  for (const auto& op : body) out.push_back(op_to_json(op));
  return out;
}

void renumber(Body& body, const std::string& path) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    Op& op = body[i];
    op.path = jr::index_path(path, i);
    if (Body* b = nested_body(op)) renumber(*b, op.path + ".body");
  }
}

}  // namespace

Case case_from_json(const json& j) {
  if (!has_scratch_shapes(j)) return CaseParser().parse(j);
  try {  // scratch_shapes: a run_scoped around the program (scratch_shapes.h)
    Case c = CaseParser().parse(without_scratch_shapes(j));
    std::get<RunScoped>(c.program.front().v).scratch_shapes = true;
    return c;
  } catch (const InputError& e) {
    const std::string message = std::string(e.what()).substr(e.path().size() + 2);
    throw InputError(scratch_shapes_source_path(e.path()), message);
  }
}

json case_to_json(const Case& c) {
  json out;
  out["format"] = c.format;
  out["name"] = c.name;
  if (!c.notes.empty()) out["notes"] = c.notes;
  json mesh = json::object();
  const Mesh& m = c.mesh;
  if (!m.grid.empty()) mesh["grid"] = m.grid;
  if (!m.grid_names.empty()) mesh["grid_names"] = axis_names_to_json(m.grid_names);
  if (!m.cluster.empty()) mesh["cluster"] = m.cluster;
  if (!m.cluster_names.empty()) mesh["cluster_names"] = axis_names_to_json(m.cluster_names);
  if (m.num_threads) mesh["num_threads"] = *m.num_threads;
  if (m.thread_name) mesh["thread_name"] = *m.thread_name;
  out["mesh"] = mesh;
  out["target"] = json{{"arch", name_of(c.target.arch, kArchs)},
                       {"semantics", name_of(c.target.semantics, kSemantics)},
                       {"entry", name_of(c.target.entry, kEntries)},
                       {"profile", name_of(c.target.profile, kProfiles)}};
  if (c.target.jax_pinned) out["target"]["jax"] = to_string(c.target.jax);
  auto arrays = [](const std::vector<ArraySpec>& v, bool with_fill) {
    json arr = json::array();
    for (const auto& a : v) {
      json e{{"name", a.name}, {"shape", a.shape}, {"dtype", std::string(dtype_name(a.dtype))}};
      if (with_fill) {
        e["fill"] = json{{"pattern", name_of(a.fill.pattern, kPatterns)}};
        if (a.fill.pattern == FillPattern::kRandom) e["fill"]["seed"] = a.fill.seed;
        if (a.fill.pattern == FillPattern::kConstant) e["fill"]["value"] = a.fill.value;
      }
      arr.push_back(e);
    }
    return arr;
  };
  out["inputs"] = arrays(c.inputs, true);
  if (!c.outputs.empty()) out["outputs"] = arrays(c.outputs, false);
  if (const RunScoped* scratch = written_as_scratch_shapes(c)) {
    json allocs = json::array();
    for (const auto& a : scratch->allocs) allocs.push_back(alloc_to_json(a));
    out["scratch_shapes"] = allocs;
    out["program"] = body_to_json(scratch->body);
  } else {
    out["program"] = body_to_json(c.program);
  }
  return out;
}

void renumber_paths(Case& c) { renumber(c.program, "$.program"); }

Case load_case_file(const std::filesystem::path& file, json* expect) {
  const json j = load_json_file(file);
  try {
    Case c = case_from_json(j);
    if (expect) *expect = j.is_object() && j.contains("expect") ? j["expect"] : json();
    return c;
  } catch (const InputError& e) {
    throw InputError(file.string() + ":" + e.path(),
                     std::string(e.what()).substr(e.path().size() + 2));
  }
}

// ---------------------------------------------------------------------------------------------

const char* to_string(Arch a) { return name_of(a, kArchs); }
const char* to_string(Semantics s) { return name_of(s, kSemantics); }
const char* to_string(Entry e) { return name_of(e, kEntries); }
const char* to_string(Profile p) { return name_of(p, kProfiles); }
const char* to_string(AllocKind k) { return name_of(k, kAllocKinds); }
const char* to_string(OobMode m) { return name_of(m, kOobModes); }
const char* to_string(FillPattern p) { return name_of(p, kPatterns); }
const char* to_string(CmpOp op) { return name_of(op, kCmpOps); }

const Body* nested_body(const Op& op) {
  if (const auto* rs = std::get_if<RunScoped>(&op.v)) return &rs->body;
  if (const auto* w = std::get_if<When>(&op.v)) return &w->body;
  if (const auto* l = std::get_if<Loop>(&op.v)) return &l->body;
  if (const auto* wm = std::get_if<WarpMap>(&op.v)) return &wm->body;
  return nullptr;
}

Body* nested_body(Op& op) { return const_cast<Body*>(nested_body(std::as_const(op))); }

int arch_major(Arch a) {
  switch (a) {
    case Arch::kSm80:
      return 8;
    case Arch::kSm90a:
      return 9;
    case Arch::kSm100a:
      return 10;
  }
  return 0;
}

std::int64_t element_count(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

}  // namespace collfuzz
