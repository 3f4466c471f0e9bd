#include "oracles/reference/program_walk.h"

namespace collfuzz::ref {
namespace {

void walk(const Body& body, Scope& scope, const std::function<void(const Op&, const Scope&)>& pre) {
  for (const Op& op : body) {
    pre(op, scope);
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      Scope inner = scope;
      inner.scoped = rs;
      for (const auto& a : rs->allocs) inner.allocs[a.name] = &a;
      walk(rs->body, inner, pre);
    } else if (const auto* w = std::get_if<When>(&op.v)) {
      if (static_value(w->cond).value_or(true)) walk(w->body, scope, pre);
    } else if (const auto* l = std::get_if<Loop>(&op.v)) {
      walk(l->body, scope, pre);  // fori_loop traces (and lowers) its body once
    }
  }
}

}  // namespace

std::optional<bool> static_value(const Cond& c) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      if (c.traced) return std::nullopt;  // a warp index bound by the expansion (warp_map.h)
      return c.constant;
    case Cond::Kind::kAtom:
      return std::nullopt;
    case Cond::Kind::kNot: {
      const auto v = static_value(c.children.front());
      return v ? std::optional<bool>(!*v) : std::nullopt;
    }
    case Cond::Kind::kAll:
    case Cond::Kind::kAny: {
      // Python folds the children only when every one of them is a bool.
      bool result = c.kind == Cond::Kind::kAll;
      for (const Cond& ch : c.children) {
        const auto v = static_value(ch);
        if (!v) return std::nullopt;
        result = c.kind == Cond::Kind::kAll ? (result && *v) : (result || *v);
      }
      return result;
    }
  }
  return std::nullopt;
}

void walk_program(const Body& program, const std::function<void(const Op&, const Scope&)>& pre) {
  Scope top;
  walk(program, top, pre);
}

}  // namespace collfuzz::ref
