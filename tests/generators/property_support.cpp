#include "tests/generators/property_support.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness/core/case_json.h"
#include "harness/core/loop_index.h"
#include "harness/runner/atomic_file.h"
#include "oracles/reference/reference.h"

namespace collfuzz {

void showValue(const Case& c, std::ostream& os) { os << case_to_json(c).dump(); }

namespace properties {

std::unique_ptr<Executor> simulator() {
  for (const auto& e : executor_registry()) {
    if (e.name == "sim") return make_executor("sim", ExecutorOptions{});
  }
  return nullptr;
}

std::vector<std::pair<std::string, Outcome>> mosaic_outcomes(const Case& c) {
  std::vector<std::pair<std::string, Outcome>> out;
  out.emplace_back("reference", predict(c, Profile::kMosaic).outcome);
  static const std::unique_ptr<Executor> sim = simulator();
  if (sim) out.emplace_back("sim", sim->run(c));
  return out;
}

void write_failing_case(const std::string& property, const Case& c) {
  const char* env = std::getenv("COLLFUZZ_PROPERTY_FAILURES");
  const std::filesystem::path dir = env ? env : "build/property-failures";
  const auto file = dir / (property + ".json");
  write_file_atomically(file, case_to_json(c).dump(2) + "\n");
  std::cout << "failing case written to " << file.string() << "\n";
}

void for_each_op(Body& body, const std::function<void(Op&)>& f) {
  for (Op& op : body) {
    f(op);
    if (Body* inner = nested_body(op)) for_each_op(*inner, f);  // every op kind with a body
  }
}

Case reverse_collective_axes(Case c) {
  for_each_op(c.program, [](Op& op) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      if (cp->collective_axes)
        std::reverse(cp->collective_axes->begin(), cp->collective_axes->end());
    }
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (auto& a : rs->allocs) {
        if (a.kind == AllocKind::kClusterBarrier)
          std::reverse(a.collective_axes.begin(), a.collective_axes.end());
      }
    }
  });
  return c;
}

namespace {

void rename_cond(Cond& c, const std::function<std::string(const std::string&)>& rename) {
  if (c.kind == Cond::Kind::kAtom) c.axis = rename(c.axis);
  for (auto& ch : c.children) rename_cond(ch, rename);
}

}  // namespace

Case rename_axes(Case c, const std::function<std::string(const std::string&)>& rename) {
  const auto name = [&](AxisName& a) {
    for (auto& p : a.parts) p = rename(p);
  };
  const auto names = [&](AxisNames& as) {
    for (auto& a : as) name(a);
  };
  names(c.mesh.grid_names);
  names(c.mesh.cluster_names);
  if (c.mesh.thread_name) c.mesh.thread_name = rename(*c.mesh.thread_name);
  for_each_op(c.program, [&](Op& op) {
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      names(rs->collective_axes);
      for (auto& a : rs->allocs) names(a.collective_axes);
    }
    const auto entry = [&](IndexEntry& e) {
      if (e.dyn_start && !e.dyn_start->loop) e.dyn_start->axis = rename(e.dyn_start->axis);
      if (e.dyn_start) {
        for (DynTerm& t : e.dyn_start->plus) {
          if (!t.loop) t.axis = rename(t.axis);
        }
      }
    };
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      if (cp->collective_axes) names(*cp->collective_axes);
      if (cp->predicate) rename_cond(*cp->predicate, rename);
      for (auto& e : cp->src_index) entry(e);
      if (cp->dst_slice) entry(*cp->dst_slice);
    }
    if (auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      if (st->predicate) rename_cond(*st->predicate, rename);
      for (auto& e : st->dst_index) entry(e);
      if (st->src_slice) entry(*st->src_slice);
    }
    if (auto* vs = std::get_if<VectorStore>(&op.v)) {
      for (auto& e : vs->dst_index) entry(e);
      if (!vs->cluster_axis.empty()) vs->cluster_axis = rename(vs->cluster_axis);
      if (!vs->cluster_index.axis.empty()) vs->cluster_index.axis = rename(vs->cluster_index.axis);
      std::function<void(VectorValue&)> value = [&](VectorValue& v) {
        for (auto& e : v.gmem_index) entry(e);
        if (!v.cluster_axis.empty()) v.cluster_axis = rename(v.cluster_axis);
        if (!v.cluster_index.axis.empty()) v.cluster_index.axis = rename(v.cluster_index.axis);
        for (VectorValue& a : v.args) value(a);
      };
      value(vs->value);
    }
    if (auto* w = std::get_if<When>(&op.v)) rename_cond(w->cond, rename);
    if (auto* wm = std::get_if<WarpMap>(&op.v)) wm->axis = rename(wm->axis);
    if (auto* tc = std::get_if<TryClusterCancel>(&op.v)) {
      for (std::string& a : tc->collective_axes) a = rename(a);
    }
    if (auto* l = std::get_if<Loop>(&op.v); l && l->nd) {
      for (std::string& a : l->nd->axes) a = rename(a);
      attach_nd_coords(*l);  // the coordinates read the renamed axes
    }
  });
  return c;
}

}  // namespace properties
}  // namespace collfuzz
