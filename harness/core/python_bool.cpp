#include "harness/core/python_bool.h"

namespace collfuzz {

std::optional<bool> python_bool(const Cond& c) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      if (c.traced) return std::nullopt;  // a warp index bound by the expansion (warp_map.h)
      return c.constant;
    case Cond::Kind::kAtom:
      return std::nullopt;
    case Cond::Kind::kNot: {
      const auto v = python_bool(c.children.front());
      return v ? std::optional<bool>(!*v) : std::nullopt;
    }
    case Cond::Kind::kAll:
    case Cond::Kind::kAny: {
      // Python folds the children only when every one of them is a bool.
      const bool all = c.kind == Cond::Kind::kAll;
      bool value = all;
      for (const Cond& child : c.children) {
        const auto v = python_bool(child);
        if (!v) return std::nullopt;
        value = all ? (value && *v) : (value || *v);
      }
      return value;
    }
  }
  return std::nullopt;
}

}  // namespace collfuzz
