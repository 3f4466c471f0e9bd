#include "generators/cond_choice.h"

namespace collfuzz::generators {
namespace {

Cond atom(const std::string& axis, CmpOp op, std::int64_t value) {
  Cond c;
  c.kind = Cond::Kind::kAtom;
  c.axis = axis;
  c.op = op;
  c.value = value;
  return c;
}

Cond resolve_atom(const AtomChoice& a, const std::vector<NamedAxis>& axes) {
  const NamedAxis& axis = axes[a.axis % axes.size()];
  const std::string& name = axis.name.as_plain();
  const std::int64_t n = axis.size;
  switch (a.test) {
    case AtomTest::kEqZero:
      return atom(name, CmpOp::kEq, 0);
    case AtomTest::kNeZero:
      return atom(name, CmpOp::kNe, 0);
    case AtomTest::kLtLast:
      return atom(name, CmpOp::kLt, n - 1);
    case AtomTest::kGeOne:
      return atom(name, CmpOp::kGe, 1);
    case AtomTest::kLeSize:
      return atom(name, CmpOp::kLe, n);
    case AtomTest::kGtSize:
      return atom(name, CmpOp::kGt, n);
    case AtomTest::kEqSize:
      return atom(name, CmpOp::kEq, n);
  }
  return atom(name, CmpOp::kEq, 0);
}

Cond compound(Cond::Kind kind, std::vector<Cond> children) {
  Cond c;
  c.kind = kind;
  c.children = std::move(children);
  return c;
}

}  // namespace

Cond constant_cond(bool value) {
  Cond c;
  c.kind = Cond::Kind::kConst;
  c.constant = value;
  return c;
}

Cond axis_equals(const std::string& axis, std::int64_t value) {
  return atom(axis, CmpOp::kEq, value);
}

Cond resolve_cond(const CondChoice& choice, const AxisEnvironment& env) {
  std::vector<NamedAxis> axes = env.plain_cluster();
  if (env.thread_indexable()) axes.push_back(*env.thread());
  using S = CondChoice::Shape;
  if (choice.shape == S::kTrue) return constant_cond(true);
  if (choice.shape == S::kFalse) return constant_cond(false);
  if (axes.empty()) return constant_cond(choice.first.axis % 2 == 0);
  switch (choice.shape) {
    case S::kAtom:
      return resolve_atom(choice.first, axes);
    case S::kAll:
      return compound(Cond::Kind::kAll,
                      {resolve_atom(choice.first, axes), resolve_atom(choice.second, axes)});
    case S::kAny:
      return compound(Cond::Kind::kAny,
                      {resolve_atom(choice.first, axes), resolve_atom(choice.second, axes)});
    case S::kNot:
      return compound(Cond::Kind::kNot, {resolve_atom(choice.first, axes)});
    default:
      return constant_cond(true);
  }
}

}  // namespace collfuzz::generators
