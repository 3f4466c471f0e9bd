#include "oracles/reference/program_walk.h"

namespace collfuzz::ref {
namespace {

using Visit = std::function<void(const Op&, const Scope&)>;

void walk(const Body& body, Scope& scope, const Visit& pre, const Visit* post) {
  for (const Op& op : body) {
    pre(op, scope);
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      Scope inner = scope;
      inner.scoped = rs;
      for (const auto& a : rs->allocs) inner.allocs[a.name] = &a;
      walk(rs->body, inner, pre, post);
    } else if (const auto* w = std::get_if<When>(&op.v)) {
      if (python_bool(w->cond).value_or(true)) walk(w->body, scope, pre, post);
    } else if (const auto* l = std::get_if<Loop>(&op.v)) {
      walk(l->body, scope, pre, post);  // fori_loop traces (and lowers) its body once
    }
    if (post) (*post)(op, scope);
  }
}

}  // namespace

void walk_program(const Body& program, const std::function<void(const Op&, const Scope&)>& pre) {
  Scope top;
  walk(program, top, pre, nullptr);
}

void walk_program(const Body& program, const Visit& pre, const Visit& post) {
  Scope top;
  walk(program, top, pre, &post);
}

}  // namespace collfuzz::ref
