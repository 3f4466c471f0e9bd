#include "harness/core/pallas_call_dce.h"

#include <optional>
#include <set>
#include <string>

#include "harness/core/python_bool.h"

namespace collfuzz {
namespace {

// Whether an op keeps an effect past the run_scopeds that allocate the names in `local`: a write
// to a ref outside them, or a memory effect. `in_warp`: inside a warp_map, whose equation
// (mpmd_map over a WarpMesh) drops the kernel-local gpu_core.MemoryEffect of barrier arrivals,
// commits and waits (_mpmd_map_abstract_eval) and keeps the writes to refs it closes over.
bool effectful(const Op& op, const std::set<std::string>& local, bool in_warp = false);

bool any_effectful(const Body& body, const std::set<std::string>& local, bool in_warp) {
  for (const Op& op : body)
    if (effectful(op, local, in_warp)) return true;
  return false;
}

bool effectful(const Op& op, const std::set<std::string>& local, bool in_warp) {
  if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
    std::set<std::string> inner = local;
    for (const Alloc& a : rs->allocs) inner.insert(a.name);
    return any_effectful(rs->body, inner, in_warp);
  }
  if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) return local.count(cp->dst) == 0;
  if (const auto* vs = std::get_if<VectorStore>(&op.v)) {
    return !vs->to_smem || local.count(vs->dst) == 0;
  }
  if (const auto* w = std::get_if<When>(&op.v)) {
    if (python_bool(w->cond) == false) return false;  // never traced
    return any_effectful(w->body, local, in_warp);
  }
  if (const auto* lp = std::get_if<Loop>(&op.v)) return any_effectful(lp->body, local, in_warp);
  if (const auto* wm = std::get_if<WarpMap>(&op.v)) return any_effectful(wm->body, local, true);
  if (std::holds_alternative<CopySmemToGmem>(op.v)) return true;  // a GMEM write
  // Barrier ops, commits and waits: gpu_core._memory_effect, which a warp_map drops.
  return !in_warp;
}

// pe.dce_jaxpr over a body at the kernel's level: effect-free ops go; cond and scan bodies are
// pruned in turn (their DCE rules); a run_scoped that stays is kept whole, and so is a warp_map,
// always (though its arrivals alone do not keep the run_scoped, when or loop around it). A case's
// scratch_shapes under pallas_call are one run_scoped around the body (harness/core/
// scratch_shapes.h), and are eliminated as one.
bool prune(Body& body, std::vector<std::string>* removed) {
  bool dropped = false;
  Body kept;
  for (Op& op : body) {
    if (auto* w = std::get_if<When>(&op.v); w && python_bool(w->cond) != false) {
      dropped = prune(w->body, removed) || dropped;
    } else if (auto* lp = std::get_if<Loop>(&op.v)) {
      dropped = prune(lp->body, removed) || dropped;
    }
    // A warp_map stays where it is: _mpmd_map_dce_rule keeps the equation whole.
    if (!effectful(op, {}) && !std::holds_alternative<WarpMap>(op.v)) {
      // A statically false when is no equation at all: it stays as written (nothing runs it).
      const auto* w = std::get_if<When>(&op.v);
      if (!(w && python_bool(w->cond) == false)) {
        dropped = true;
        if (removed) removed->push_back(op.path);
        continue;
      }
    }
    kept.push_back(std::move(op));
  }
  body = std::move(kept);
  return dropped;
}

// Whether prune would remove anything from `body`: the same walk, reading only, so that a case
// the DCE leaves as it is (most) is not copied to find out.
bool prunes_anything(const Body& body) {
  for (const Op& op : body) {
    const auto* w = std::get_if<When>(&op.v);
    const bool never_traced = w && python_bool(w->cond) == false;
    if (w && !never_traced && prunes_anything(w->body)) return true;
    if (const auto* lp = std::get_if<Loop>(&op.v); lp && prunes_anything(lp->body)) return true;
    if (!never_traced && !effectful(op, {}) && !std::holds_alternative<WarpMap>(op.v)) return true;
  }
  return false;
}

}  // namespace

std::optional<Case> pallas_call_dce(const Case& c, std::vector<std::string>* removed) {
  if (c.target.entry != Entry::kPallasCall) return std::nullopt;
  if (!prunes_anything(c.program)) return std::nullopt;
  Case out = c;
  prune(out.program, removed);
  return out;
}

}  // namespace collfuzz
