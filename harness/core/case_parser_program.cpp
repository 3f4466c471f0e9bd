// The case reader: the program. Ops, loops, warp maps, run_scoped scopes, allocations, barrier
// uses and conditions (case_parser.h).

#include "harness/core/case_parser.h"

#include "harness/core/case_json_fields.h"
#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/scratch_shapes.h"
#include "harness/core/warp_map.h"

namespace collfuzz::case_json {

Body CaseParser::parse_body(const json& j, const std::string& path, int depth) {
  if (depth > limits::kMaxDepth) {
    throw InputError(path,
                     "ops are nested more than " + std::to_string(limits::kMaxDepth) + " deep");
  }
  jr::array(j, path, static_cast<std::size_t>(limits::kMaxOps));
  Body body;
  const std::size_t carries_before = carries_.size();  // a loop's result lives to the body's end
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (++op_count_ > limits::kMaxOps) {
      throw InputError(jr::index_path(path, i),
                       "the program has more than " + std::to_string(limits::kMaxOps) + " ops");
    }
    body.push_back(parse_op(j[i], jr::index_path(path, i), depth));
  }
  carries_.resize(carries_before);
  return body;
}

Op CaseParser::parse_op(const json& j, const std::string& path, int depth) {
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
  } else if (kind == "barrier_wait" || kind == "barrier_arrive_and_wait") {
    jr::object(j, path, {"op", "barrier"});
    op.v =
        BarrierWait{parse_barrier_use(jr::required(j, path, "barrier"), path + ".barrier", false),
                    kind == "barrier_arrive_and_wait"};
  } else if (kind == "try_cluster_cancel") {
    op.v = parse_try_cluster_cancel(j, path);
  } else if (kind == "commit_smem_to_gmem_group") {
    jr::object(j, path, {"op"});
    op.v = CommitSmemToGmemGroup{};
  } else if (kind == "wait_smem_to_gmem") {
    jr::object(j, path, {"op", "n", "wait_read_only"});
    WaitSmemToGmem w;
    // A negative n is JAX's own trace error (rule trace.wait_smem_to_gmem.n), not bad input.
    w.n = jr::integer(jr::required(j, path, "n"), path + ".n", -kMaxWaitGroups, kMaxWaitGroups);
    if (const json* r = jr::member(j, "wait_read_only"))
      w.read_only = jr::boolean(*r, path + ".wait_read_only");
    op.v = w;
  } else if (kind == "vector_store") {
    op.v = parse_vector_store(j, path);
  } else if (kind == "commit_smem") {
    jr::object(j, path, {"op"});
    op.v = CommitSmem{};
  } else if (kind == "loop") {
    op.v = parse_loop(j, path, depth);
  } else if (kind == "nd_loop") {
    op.v = parse_nd_loop(j, path, depth);
  } else if (kind == "warp_map") {
    op.v = parse_warp_map(j, path, depth);
  } else if (kind == "when") {
    jr::object(j, path, {"op", "cond", "body"});
    When w;
    w.cond = parse_cond(jr::required(j, path, "cond"), path + ".cond", 0);
    w.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
    op.v = std::move(w);
  } else {
    throw InputError(path + ".op", "unknown op \"" + kind +
                                       "\"; expected run_scoped, copy_gmem_to_smem, "
                                       "copy_smem_to_gmem, commit_smem_to_gmem_group, "
                                       "wait_smem_to_gmem, barrier_arrive, barrier_wait, "
                                       "barrier_arrive_and_wait, try_cluster_cancel, "
                                       "vector_store, commit_smem, when, loop, nd_loop or "
                                       "warp_map");
  }
  if (!warp_axes_.empty()) check_in_warp_map(kind, path);
  return op;
}

WarpMap CaseParser::parse_warp_map(const json& j, const std::string& path, int depth) {
  jr::object(j, path, {"op", "axis", "body"});
  WarpMap wm;
  wm.axis = jr::identifier(jr::required(j, path, "axis"), path + ".axis");
  warp_axes_.push_back(wm.axis);
  wm.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
  warp_axes_.pop_back();
  check_warp_map_body(wm, c_.inputs);
  return wm;
}

Loop CaseParser::parse_loop(const json& j, const std::string& path, int depth) {
  jr::object(j, path, {"op", "trip_count", "body", "index", "carry"});
  if (in_loop_) {
    throw InputError(path + ".op",
                     "loops do not nest (a loop's body holds copies, waits, "
                     "arrivals and when)");
  }
  Loop l;
  l.trip_count =
      jr::integer(jr::required(j, path, "trip_count"), path + ".trip_count", 1, kMaxTripCount);
  if (const json* ix = jr::member(j, "index")) l.index = jr::identifier(*ix, path + ".index");
  loop_names_.clear();
  if (!l.index.empty()) loop_names_.push_back({l.index, l.trip_count, false});
  parse_loop_body(j, path, depth, l);
  return l;
}

void CaseParser::parse_loop_body(const json& j, const std::string& path, int depth, Loop& l) {
  const std::int64_t ops_before = op_count_;
  // The carry's init is read outside the loop (it may not read the loop's index or its own
  // carry); its next inside, after it is in scope.
  if (const json* cj = jr::member(j, "carry")) {
    l.carry = parse_carry(*cj, path + ".carry");
    in_loop_ = true;
    parse_carry_next(*cj, path + ".carry", *l.carry);
  }
  in_loop_ = true;
  l.body = parse_body(jr::required(j, path, "body"), path + ".body", depth + 1);
  in_loop_ = false;
  loop_names_.clear();
  if ((op_count_ - ops_before) * l.trip_count > kMaxLoopSteps) {
    const std::string field = l.nd ? ".grid" : ".trip_count";
    throw InputError(path + field, "the loop runs " + std::to_string(op_count_ - ops_before) +
                                       " ops " + std::to_string(l.trip_count) +
                                       " times, more than " + std::to_string(kMaxLoopSteps) +
                                       " op executions");
  }
}

RunScoped CaseParser::parse_run_scoped(const json& j, const std::string& path, int depth) {
  if (in_loop_) {
    throw InputError(path + ".op", "a loop's body holds no run_scoped (allocate outside the loop)");
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

// `transforms`: [{"tiling": [...]}, {"swizzle": S}] in JAX's order, either left out. The values
// JAX refuses (a swizzle other than 32, 64, 128; a tiling that does not divide the shape) are
// the reference's rules; what no JAX program can write is refused here.
SmemTransforms CaseParser::parse_smem_transforms(const json& j, const std::string& path,
                                                 std::size_t rank) {
  jr::array(j, path, 2);
  SmemTransforms t;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string at = jr::index_path(path, i);
    const json& e = j[i];
    jr::object(e, at, {"tiling", "swizzle"});
    if (e.size() != 1) throw InputError(at, "expected one of \"tiling\" or \"swizzle\"");
    if (const json* ti = jr::member(e, "tiling")) {
      if (!t.tiling.empty() || t.swizzle != 0) {
        throw InputError(at,
                         "a tiling comes first and once (plgpu.TilingTransform, then "
                         "plgpu.SwizzleTransform)");
      }
      jr::array(*ti, at + ".tiling", rank);
      if (ti->empty()) throw InputError(at + ".tiling", "expected at least one tile dim");
      for (std::size_t k = 0; k < ti->size(); ++k) {
        t.tiling.push_back(
            jr::integer((*ti)[k], jr::index_path(at + ".tiling", k), 1, limits::kMaxDim));
      }
    } else {
      if (t.swizzle != 0) throw InputError(at, "a second swizzle");
      t.swizzle = jr::integer(jr::required(e, at, "swizzle"), at + ".swizzle", 1, 4096);
    }
  }
  return t;
}

Alloc CaseParser::parse_alloc(const json& j, const std::string& path) {
  if (!j.is_object())
    throw InputError(path, std::string("expected an allocation object, got ") + jr::type_name(j));
  Alloc a;
  a.kind = jr::choice(jr::required(j, path, "kind"), path + ".kind", kAllocKinds);
  switch (a.kind) {
    case AllocKind::kSmem:
      jr::object(j, path, {"name", "kind", "shape", "dtype", "transforms"});
      break;
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
      if (const json* t = jr::member(j, "transforms"))
        a.transforms = parse_smem_transforms(*t, path + ".transforms", a.shape.size());
      if (a.transforms.any() && c_.target.arch == Arch::kSm80) {
        throw InputError(path + ".transforms",
                         "transforms of an smem allocation on a pre-Hopper target (cp.async "
                         "copies) are not expressible");
      }
      if (a.transforms.any() && dtype_bits(a.dtype) % 8 != 0) {
        throw InputError(
            path + ".transforms",
            "transforms of an smem allocation of a sub-byte dtype are not expressible");
      }
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

BarrierUse CaseParser::parse_barrier_use(const json& j, const std::string& path,
                                         bool plain_barrier_only) {
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
    if (i->is_object()) {  // bars.at[i % 2]: a loop's slot
      b.slot = parse_loop_slot(*i, path + ".index", a->num_barriers, slot_axis_size());
      b.index = 0;
    } else {
      b.index = jr::integer(*i, path + ".index", 0, a->num_barriers - 1);
    }
  }
  return b;
}

Cond CaseParser::parse_cond(const json& j, const std::string& path, int depth) {
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
  if (n_ops != 1) throw InputError(path, "a condition needs exactly one of eq, ne, lt, le, gt, ge");
  return c;
}

}  // namespace collfuzz::case_json
