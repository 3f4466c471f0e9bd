#include "harness/campaign/case_shrinker.h"

#include <algorithm>
#include <set>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/loop_index.h"

namespace collfuzz::campaign {
namespace {

using Address = std::vector<std::size_t>;  // indices through nested bodies

void collect_addresses(const Body& body, Address& prefix, std::vector<Address>& out) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    prefix.push_back(i);
    out.push_back(prefix);
    if (const Body* inner = nested_body(body[i])) collect_addresses(*inner, prefix, out);
    prefix.pop_back();
  }
}

std::vector<Address> op_addresses(const Case& c) {
  std::vector<Address> out;
  Address prefix;
  collect_addresses(c.program, prefix, out);
  return out;
}

Body& body_of(Op& op) { return *nested_body(op); }

// The body that holds the op at `a`.
Body& parent_body(Case& c, const Address& a) {
  Body* b = &c.program;
  for (std::size_t i = 0; i + 1 < a.size(); ++i) b = &body_of((*b)[a[i]]);
  return *b;
}

void for_each_op(Body& body, const std::function<void(Op&)>& f) {
  for (Op& op : body) {
    f(op);
    if (Body* inner = nested_body(op)) for_each_op(*inner, f);
  }
}

std::int64_t count_ops(const Body& body) {
  std::int64_t n = 0;
  for (const Op& op : body) {
    ++n;
    if (const Body* inner = nested_body(op)) n += count_ops(*inner);
  }
  return n;
}

std::set<std::string> referenced_names(Case& c) {
  std::set<std::string> names;
  for_each_op(c.program, [&](Op& op) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      names.insert(cp->src);
      names.insert(cp->dst);
      if (cp->barrier) names.insert(cp->barrier->alloc);
    }
    if (auto* cp = std::get_if<CopySmemToGmem>(&op.v)) {
      names.insert(cp->src);
      names.insert(cp->dst);
    }
    if (auto* a = std::get_if<BarrierArrive>(&op.v)) names.insert(a->barrier.alloc);
    if (auto* w = std::get_if<BarrierWait>(&op.v)) names.insert(w->barrier.alloc);
    // A vector value's loads, a vector store's destination and a loop carry's loads.
    const auto loads = [&](const VectorValue& v) {
      for_each_vector_load(v, [&](const VectorValue& load) { names.insert(load.ref); });
    };
    if (auto* vs = std::get_if<VectorStore>(&op.v)) {
      names.insert(vs->dst);
      loads(vs->value);
    }
    if (auto* l = std::get_if<Loop>(&op.v); l && l->carry) {
      loads(l->carry->init);
      loads(l->carry->next);
    }
  });
  return names;
}

// ---- candidate families, simplest-first within each ----------------------------------------

std::vector<Case> delete_ops(const Case& c) {
  std::vector<Case> out;
  for (const Address& a : op_addresses(c)) {
    Case k = c;
    Body& b = parent_body(k, a);
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(a.back()));
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<Case> unwrap_whens(const Case& c) {
  std::vector<Case> out;
  for (const Address& a : op_addresses(c)) {
    Case k = c;
    Body& b = parent_body(k, a);
    Op& op = b[a.back()];
    // A when, a loop, a warp_map (its body then runs once per warpgroup; one that used the warp
    // axis no longer parses and is dropped), or a run_scoped that allocates nothing (any more:
    // drop_unused removes allocations nobody names) gives way to its body.
    const auto* rs = std::get_if<RunScoped>(&op.v);
    if (!std::holds_alternative<When>(op.v) && !std::holds_alternative<Loop>(op.v) &&
        !std::holds_alternative<WarpMap>(op.v) && !(rs && rs->allocs.empty()))
      continue;
    if (const auto* l = std::get_if<Loop>(&op.v); l && l->nd) {
      // An nd_loop shrinks its grid (the last dim above 1, halved; the reader re-derives each
      // thread's trips and grid index), never unwrapped: its index differs per thread.
      const Shape& grid = l->nd->grid;
      for (std::size_t d = grid.size(); d-- > 0;) {
        if (grid[d] < 2) continue;
        Case fewer = c;
        Loop& fl = std::get<Loop>(parent_body(fewer, a)[a.back()].v);
        fl.nd->grid[d] = grid[d] / 2;
        out.push_back(std::move(fewer));
        break;
      }
      continue;
    }
    if (auto* l = std::get_if<Loop>(&op.v); l && l->trip_count > 1) {
      Case fewer = c;  // a loop shrinks first to fewer trips (to one: its body, unwrapped)
      std::get<Loop>(parent_body(fewer, a)[a.back()].v).trip_count = l->trip_count / 2;
      out.push_back(std::move(fewer));
    }
    // A loop that carries a value stays a loop (its result is read after it).
    if (const auto* l = std::get_if<Loop>(&op.v); l && l->carry) continue;
    Body inner = std::move(*nested_body(op));
    // A loop unwrapped runs its first trip: its index is 0 there.
    if (const auto* l = std::get_if<Loop>(&op.v); l && !l->index.empty())
      bind_loop_index(inner, l->index, 0);
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(a.back()));
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(a.back()), inner.begin(), inner.end());
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<Case> drop_unused(const Case& c) {
  std::vector<Case> out;
  Case k = c;
  const auto used = referenced_names(k);
  bool changed = false;
  for_each_op(k.program, [&](Op& op) {
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      const auto before = rs->allocs.size();
      std::erase_if(rs->allocs, [&](const Alloc& a) { return !used.count(a.name); });
      changed = changed || rs->allocs.size() != before;
    }
  });
  const auto in_before = k.inputs.size() + k.outputs.size();
  std::erase_if(k.inputs, [&](const ArraySpec& a) { return !used.count(a.name); });
  std::erase_if(k.outputs, [&](const ArraySpec& a) { return !used.count(a.name); });
  changed = changed || k.inputs.size() + k.outputs.size() != in_before;
  if (changed) out.push_back(std::move(k));
  // One unused allocation at a time, for when dropping all of them changes the finding.
  for (const Address& a : op_addresses(c)) {
    Case base = c;
    auto* rs = std::get_if<RunScoped>(&parent_body(base, a)[a.back()].v);
    if (!rs) continue;
    for (std::size_t j = 0; j < rs->allocs.size(); ++j) {
      if (used.count(rs->allocs[j].name)) continue;
      Case k2 = c;
      auto& allocs = std::get<RunScoped>(parent_body(k2, a)[a.back()].v).allocs;
      allocs.erase(allocs.begin() + static_cast<std::ptrdiff_t>(j));
      out.push_back(std::move(k2));
    }
  }
  return out;
}

std::vector<Case> shrink_mesh(const Case& c) {
  std::vector<Case> out;
  const Mesh& m = c.mesh;
  for (std::size_t i = 0; i < m.cluster.size(); ++i) {
    Case k = c;
    k.mesh.cluster.erase(k.mesh.cluster.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < k.mesh.cluster_names.size()) {
      k.mesh.cluster_names.erase(k.mesh.cluster_names.begin() + static_cast<std::ptrdiff_t>(i));
    }
    out.push_back(std::move(k));
  }
  for (std::size_t i = 0; i < m.cluster.size(); ++i) {
    for (std::int64_t v : {std::int64_t{1}, std::int64_t{2}, m.cluster[i] / 2}) {
      if (v < 1 || v >= m.cluster[i]) continue;
      Case k = c;
      k.mesh.cluster[i] = v;
      out.push_back(std::move(k));
    }
  }
  if (!m.grid.empty() || !m.grid_names.empty()) {
    Case k = c;
    k.mesh.grid.clear();
    k.mesh.grid_names.clear();
    out.push_back(std::move(k));
  }
  if (m.num_threads || m.thread_name) {
    Case k = c;
    k.mesh.num_threads.reset();
    k.mesh.thread_name.reset();
    out.push_back(std::move(k));
  }
  if (m.num_threads && *m.num_threads > 1) {
    for (std::int64_t v : {std::int64_t{1}, std::int64_t{2}, *m.num_threads / 2}) {
      if (v < 1 || v >= *m.num_threads) continue;
      Case k = c;
      k.mesh.num_threads = v;
      out.push_back(std::move(k));
    }
  }
  return out;
}

// Applies `f` to dim `k` counted from the minor end of every array and SMEM allocation, and to
// the index entries on those dims, so that shapes that agree keep agreeing.
Case scale_trailing(const Case& c, std::size_t k,
                    const std::function<std::int64_t(std::int64_t)>& f) {
  Case out = c;
  const auto on_shape = [&](Shape& s) {
    if (s.size() > k) s[s.size() - 1 - k] = f(s[s.size() - 1 - k]);
  };
  const auto rank_of = [&](const std::vector<ArraySpec>& arrays,
                           const std::string& name) -> std::size_t {
    for (const auto& a : arrays) {
      if (a.name == name) return a.shape.size();
    }
    return 0;
  };
  const auto on_index = [&](std::vector<IndexEntry>& index, std::size_t rank) {
    if (rank <= k || index.size() < rank - k) return;
    IndexEntry& e = index[rank - 1 - k];
    if (e.kind == IndexEntry::Kind::kAt) {
      e.at = std::min(e.at, f(e.at + 1) - 1);
      return;
    }
    e.size = f(e.size);
    e.start = e.start > 0 ? f(e.start) : 0;
    if (e.dyn_start) {
      e.dyn_start->mul = e.dyn_start->mul > 0 ? f(e.dyn_start->mul) : 0;
      e.dyn_start->add = e.dyn_start->add > 0 ? f(e.dyn_start->add) : 0;
      for (DynTerm& t : e.dyn_start->plus) t.mul = t.mul > 0 ? f(t.mul) : 0;
    }
  };
  for (auto& a : out.inputs) on_shape(a.shape);
  for (auto& a : out.outputs) on_shape(a.shape);
  for_each_op(out.program, [&](Op& op) {
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (auto& a : rs->allocs) {
        if (a.kind == AllocKind::kSmem) on_shape(a.shape);
      }
    }
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v))
      on_index(cp->src_index, rank_of(c.inputs, cp->src));
    if (auto* cp = std::get_if<CopySmemToGmem>(&op.v))
      on_index(cp->dst_index, rank_of(c.outputs, cp->dst));
  });
  return out;
}

std::vector<Case> shrink_dims(const Case& c) {
  std::vector<Case> out;
  std::size_t max_rank = 0;
  for (const auto& a : c.inputs) max_rank = std::max(max_rank, a.shape.size());
  const auto halve = [](std::int64_t d) { return d >= 2 ? d / 2 : d; };
  const auto one = [](std::int64_t) { return std::int64_t{1}; };
  for (std::size_t k = 0; k < max_rank; ++k) {
    out.push_back(scale_trailing(c, k, one));
    out.push_back(scale_trailing(c, k, halve));
  }
  return out;
}

std::vector<Case> simplify_fields(const Case& c) {
  std::vector<Case> out;
  const auto each_copy = [&](const std::function<bool(CopyGmemToSmem&)>& edit) {
    const auto n = op_addresses(c).size();
    for (std::size_t i = 0; i < n; ++i) {
      Case k = c;
      std::size_t j = 0;
      bool changed = false;
      for_each_op(k.program, [&](Op& op) {
        if (j++ != i) return;
        if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) changed = edit(*cp);
      });
      if (changed) out.push_back(std::move(k));
    }
  };
  each_copy([](CopyGmemToSmem& cp) { return cp.predicate ? (cp.predicate.reset(), true) : false; });
  each_copy([](CopyGmemToSmem& cp) { return cp.oob_mode ? (cp.oob_mode.reset(), true) : false; });
  each_copy([](CopyGmemToSmem& cp) {
    if (!cp.collective_axes || cp.collective_axes->size() < 2) return false;
    cp.collective_axes->pop_back();
    return true;
  });
  // A store loses its predicate, then a reducing store becomes a plain one, then a store in
  // flight waits for itself and commits its group, op by op.
  const auto each_store = [&](const std::function<bool(CopySmemToGmem&)>& edit) {
    for (std::size_t i = 0, n = op_addresses(c).size(); i < n; ++i) {
      Case k = c;
      std::size_t j = 0;
      bool changed = false;
      for_each_op(k.program, [&](Op& op) {
        auto* st = std::get_if<CopySmemToGmem>(&op.v);
        if (j++ == i && st) changed = edit(*st);
      });
      if (changed) out.push_back(std::move(k));
    }
  };
  each_store(
      [](CopySmemToGmem& st) { return st.predicate ? (st.predicate.reset(), true) : false; });
  each_store(
      [](CopySmemToGmem& st) { return st.reduction_op ? (st.reduction_op.reset(), true) : false; });
  each_store([](CopySmemToGmem& st) { return !st.wait ? (st.wait = true, true) : false; });
  // An index summed over several axes loses its extra terms.
  const auto drop_plus = [](std::vector<IndexEntry>& index) {
    bool changed = false;
    for (IndexEntry& e : index) {
      if (!e.dyn_start || e.dyn_start->plus.empty()) continue;
      e.dyn_start->plus.clear();
      changed = true;
    }
    return changed;
  };
  each_copy([&](CopyGmemToSmem& cp) { return drop_plus(cp.src_index); });
  each_store([&](CopySmemToGmem& st) { return drop_plus(st.dst_index); });
  each_store(
      [](CopySmemToGmem& st) { return !st.commit_group ? (st.commit_group = true, true) : false; });
  // A vector store's value becomes one of its operands (the first, then the second).
  for (std::size_t side = 0; side < 2; ++side) {
    for (std::size_t i = 0, n = op_addresses(c).size(); i < n; ++i) {
      Case k = c;
      std::size_t j = 0;
      bool changed = false;
      for_each_op(k.program, [&](Op& op) {
        auto* vs = std::get_if<VectorStore>(&op.v);
        if (j++ != i || !vs || vs->value.args.size() != 2) return;
        VectorValue operand = vs->value.args[side];
        vs->value = std::move(operand);
        changed = true;
      });
      if (changed) out.push_back(std::move(k));
    }
  }
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].fill.pattern == FillPattern::kIota) continue;
    Case k = c;
    k.inputs[i].fill = Fill{};
    out.push_back(std::move(k));
  }
  {
    Case k = c;
    bool changed = false;
    for_each_op(k.program, [&](Op& op) {
      if (auto* rs = std::get_if<RunScoped>(&op.v)) {
        for (auto& a : rs->allocs) {
          if ((a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) &&
              a.num_barriers > 1) {
            a.num_barriers = 1;
            changed = true;
          }
        }
      }
    });
    if (changed) out.push_back(std::move(k));
  }
  if (c.target.semantics != Semantics::kWarpgroup) {
    Case k = c;
    k.target.semantics = Semantics::kWarpgroup;
    out.push_back(std::move(k));
  }
  if (c.target.arch != Arch::kSm90a) {
    Case k = c;
    k.target.arch = Arch::kSm90a;
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

CaseSize case_size(const Case& c) {
  CaseSize s;
  s.ops = count_ops(c.program);
  for (auto d : c.mesh.cluster) s.ctas *= d;
  for (const auto& a : c.inputs) s.elements += element_count(a.shape);
  for (const auto& a : c.outputs) s.elements += element_count(a.shape);
  Case copy = c;
  for_each_op(copy.program, [&](Op& op) {
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const auto& a : rs->allocs) {
        if (a.kind == AllocKind::kSmem) s.elements += element_count(a.shape);
      }
    }
  });
  return s;
}

CaseShrinker::CaseShrinker(std::function<bool(const Case&)> keeps, ShrinkLimits limits)
    : keeps_(std::move(keeps)), limits_(limits) {}

bool CaseShrinker::out_of_budget() const {
  return stats_.candidates >= limits_.max_candidates ||
         std::chrono::steady_clock::now() >= deadline_;
}

std::optional<Case> CaseShrinker::valid(const Case& candidate) const {
  try {
    Case parsed = case_from_json(case_to_json(candidate));
    parsed.name = candidate.name;
    parsed.notes = candidate.notes;
    return parsed;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

bool CaseShrinker::try_candidate(Case& current, const Case& candidate) {
  auto parsed = valid(candidate);
  if (!parsed) return false;
  // A candidate that normalises to the current case changes nothing: accepting it would count as
  // progress forever (a pass that cannot shrink a field further proposes it unchanged) and burn
  // the whole budget.
  if (case_to_json(*parsed) == case_to_json(current)) return false;
  ++stats_.candidates;
  if (!keeps_(*parsed)) return false;
  ++stats_.accepted;
  current = std::move(*parsed);
  return true;
}

bool CaseShrinker::pass(Case& current,
                        const std::function<std::vector<Case>(const Case&)>& candidates) {
  bool any = false;
  for (bool progress = true; progress && !out_of_budget();) {
    progress = false;
    for (const Case& cand : candidates(current)) {
      if (out_of_budget()) break;
      if (try_candidate(current, cand)) {
        progress = any = true;
        break;
      }
    }
  }
  return any;
}

Case CaseShrinker::shrink(Case start) {
  deadline_ = std::chrono::steady_clock::now() + limits_.max_time;
  return structural(std::move(start));
}

Case CaseShrinker::structural(Case start) {
  Case current = std::move(start);
  for (bool progress = true; progress && !out_of_budget();) {
    progress = false;
    progress |= pass(current, delete_ops);
    progress |= pass(current, unwrap_whens);
    progress |= pass(current, shrink_mesh);
    progress |= pass(current, drop_unused);
    progress |= pass(current, shrink_dims);
    progress |= pass(current, simplify_fields);
  }
  return current;
}

Case CaseShrinker::shrink(const rc::Shrinkable<Case>& start) {
  deadline_ = std::chrono::steady_clock::now() + limits_.max_time;
  rc::Shrinkable<Case> current = start;
  // RapidCheck's search: take the first shrink that keeps the finding, and repeat from there.
  for (bool progress = true; progress && !out_of_budget();) {
    progress = false;
    auto shrinks = current.shrinks();
    while (auto next = shrinks.next()) {
      if (out_of_budget()) break;
      ++stats_.candidates;
      if (keeps_(next->value())) {
        ++stats_.accepted;
        current = std::move(*next);
        progress = true;
        break;
      }
    }
  }
  return structural(current.value());
}

}  // namespace collfuzz::campaign
