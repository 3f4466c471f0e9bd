#include "harness/core/warp_map.h"

#include <algorithm>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"

namespace collfuzz {
namespace {

bool compare(std::int64_t x, CmpOp op, std::int64_t v) {
  switch (op) {
    case CmpOp::kEq:
      return x == v;
    case CmpOp::kNe:
      return x != v;
    case CmpOp::kLt:
      return x < v;
    case CmpOp::kLe:
      return x <= v;
    case CmpOp::kGt:
      return x > v;
    case CmpOp::kGe:
      return x >= v;
  }
  return false;
}

void bind_cond(Cond& c, const std::string& axis, std::int64_t warp) {
  if (c.kind == Cond::Kind::kAtom && c.axis == axis) {
    c.constant = compare(warp, c.op, c.value);
    c.kind = Cond::Kind::kConst;
    c.traced = true;
    c.axis.clear();
    return;
  }
  for (Cond& ch : c.children) bind_cond(ch, axis, warp);
}

void bind_index(std::vector<IndexEntry>& index, const std::string& axis, std::int64_t warp) {
  for (IndexEntry& e : index) {
    if (!e.dyn_start) continue;
    const auto v = dyn_fold(*e.dyn_start, [&](const std::string& a, bool loop) {
      return !loop && a == axis ? std::optional<std::int64_t>(warp) : std::nullopt;
    });
    if (!v) continue;
    e.folded_multiple_of = e.dyn_start->multiple_of > 0;
    (e.kind == IndexEntry::Kind::kAt ? e.at : e.start) = *v;
    e.dyn_start.reset();
  }
}

// lax.axis_index(axis) is `warp` everywhere in `body`.
void bind(Body& body, const std::string& axis, std::int64_t warp) {
  for (Op& op : body) {
    if (auto* w = std::get_if<When>(&op.v)) bind_cond(w->cond, axis, warp);
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      bind_index(cp->src_index, axis, warp);
      if (cp->predicate) bind_cond(*cp->predicate, axis, warp);
    }
    if (auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      bind_index(st->dst_index, axis, warp);
      if (st->predicate) bind_cond(*st->predicate, axis, warp);
    }
    if (Body* inner = nested_body(op)) bind(*inner, axis, warp);
  }
}

// Marks every op of `body`, nested ones included, as the copy of warp `warp`.
void mark_warp(Body& body, std::int64_t warp) {
  for (Op& op : body) {
    op.warp = warp;
    if (Body* inner = nested_body(op)) mark_warp(*inner, warp);
  }
}

Body expand(const Body& body, const std::string& context) {
  Body out;
  out.reserve(body.size());
  for (const Op& op : body) {
    if (const auto* wm = std::get_if<WarpMap>(&op.v)) {
      Op marker;
      marker.path = op.path;
      marker.warp_axis = context;
      marker.from_warp_map = true;
      When all_warps;  // Cond{} is the constant true
      // A nested warp_map never runs (JAX rejects it when it lowers or interprets it), but JAX
      // traces its body first: one copy, for warp 0, keeps its trace-time rules in view.
      const std::int64_t warps = context.empty() ? kWarpsPerWarpgroup : 1;
      for (std::int64_t warp = 0; warp < warps; ++warp) {
        Body copy = expand(wm->body, wm->axis);
        bind(copy, wm->axis, warp);
        if (context.empty()) mark_warp(copy, warp);
        for (Op& o : copy) all_warps.body.push_back(std::move(o));
      }
      marker.v = std::move(all_warps);
      out.push_back(std::move(marker));
      continue;
    }
    Op copy = op;
    copy.warp_axis = context;
    if (Body* inner = nested_body(copy)) *inner = expand(*nested_body(op), context);
    out.push_back(std::move(copy));
  }
  return out;
}

bool holds_warp_map(const Body& body) {
  for (const Op& op : body) {
    if (std::holds_alternative<WarpMap>(op.v)) return true;
    if (const Body* inner = nested_body(op); inner && holds_warp_map(*inner)) return true;
  }
  return false;
}

void check_indices(const Body& body, const std::string& axis,
                   const std::vector<ArraySpec>& inputs) {
  for (const Op& op : body) {
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      const ArraySpec* src = nullptr;
      for (const auto& a : inputs) {
        if (a.name == cp->src) src = &a;
      }
      for (std::size_t d = 0; src && d < cp->src_index.size() && d < src->shape.size(); ++d) {
        const IndexEntry& e = cp->src_index[d];
        if (e.dyn_start && !e.dyn_start->plus.empty()) {
          bool warp_term = !e.dyn_start->loop && e.dyn_start->axis == axis;
          for (const DynTerm& t : e.dyn_start->plus)
            warp_term = warp_term || (!t.loop && t.axis == axis);
          if (warp_term) {
            throw InputError(op.path + ".src.index[" + std::to_string(d) + "]",
                             "an index summed over the warp axis and others is not modelled");
          }
        }
        if (!e.dyn_start || e.dyn_start->loop || e.dyn_start->axis != axis ||
            e.kind != IndexEntry::Kind::kSlice)
          continue;
        for (std::int64_t warp = 0; warp < kWarpsPerWarpgroup; ++warp) {
          const std::int64_t start = warp * e.dyn_start->mul + e.dyn_start->add;
          if (start < 0 || start + e.size > src->shape[d]) {
            throw InputError(op.path + ".src.index[" + std::to_string(d) + "]",
                             "warp " + std::to_string(warp) + " would read [" +
                                 std::to_string(start) + ", " + std::to_string(start + e.size) +
                                 ") of a dim of " + std::to_string(src->shape[d]) +
                                 "; out-of-bounds starts on the warp axis are not modelled");
          }
        }
      }
    }
    if (const auto* rs = std::get_if<RunScoped>(&op.v);
        rs && (!rs->allocs.empty() || !rs->collective_axes.empty())) {
      throw InputError(op.path + ".allocs",
                       "a run_scoped inside warp_map with allocations or collective_axes is not "
                       "modelled (interpret mode allocates per warp); allocate outside the "
                       "warp_map");
    }
    if (const Body* inner = nested_body(op)) check_indices(*inner, axis, inputs);
  }
}

}  // namespace

void check_in_warp_map(const std::string& kind, const std::string& path) {
  if (kind == "barrier_wait" || kind == "barrier_arrive_and_wait") {
    throw InputError(path + ".op",
                     "a " + kind +
                         " inside warp_map is not modelled (the warps run concurrently); "
                         "wait after the warp_map");
  }
  if (kind == "copy_smem_to_gmem" || kind == "commit_smem_to_gmem_group" ||
      kind == "wait_smem_to_gmem" || kind == "vector_store" || kind == "commit_smem" ||
      kind == "nd_loop" || kind == "try_cluster_cancel") {
    throw InputError(path + ".op", kind + " inside warp_map is not modelled");
  }
}

void check_warp_map_body(const WarpMap& wm, const std::vector<ArraySpec>& inputs) {
  check_indices(wm.body, wm.axis, inputs);
}

bool has_warp_map(const Body& program) { return holds_warp_map(program); }

namespace {

bool cond_is_traced(const Cond& c) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      return c.traced;
    case Cond::Kind::kAtom:
      return true;
    default:
      return std::any_of(c.children.begin(), c.children.end(), cond_is_traced);
  }
}

}  // namespace

bool cond_computes_not(const Cond& cond) {
  if (cond.kind == Cond::Kind::kNot && !cond.children.empty() && cond_is_traced(cond.children[0]))
    return true;
  return std::any_of(cond.children.begin(), cond.children.end(), cond_computes_not);
}

Case expand_warp_maps(const Case& c) {
  Case out = c;
  out.program = expand(c.program, "");
  return out;
}

}  // namespace collfuzz
