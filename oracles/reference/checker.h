// The state the rule families share while they check one case: the case, the profile being
// predicted, the mesh facts, and the explain log. A violated rule throws Rejected, which the
// driver (reference.cpp) turns into the predicted diagnostic.
#pragma once

#include <concepts>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "oracles/reference/mesh_facts.h"
#include "oracles/reference/rules.h"

namespace collfuzz::ref {

struct Rejected {
  Diagnostic diagnostic;
};

struct ExplainStep {
  RuleId rule;
  Stage stage;
  std::string where;  // JSON path of the op checked, or "mesh"/"kernel"
  bool fired;
};

class Checker {
 public:
  Checker(const Case& the_case, Profile the_profile, std::vector<ExplainStep>* log)
      : c(the_case), profile(the_profile), mesh(the_case), log_(log) {}

  const Case& c;
  const Profile profile;
  const MeshFacts mesh;

  // Records that rule `id` was checked at `where`; if `violated`, throws Rejected with the
  // message filled from `holes()` (only evaluated then). `stage` overrides the table's stage
  // (launch-context rules fire at `dialect` under Warpgroup semantics).
  template <typename HolesFn>
  requires std::invocable<HolesFn>
  void check(RuleId id, bool violated, const std::string& where, HolesFn&& holes,
             std::optional<Stage> stage = std::nullopt) {
    const Rule& r = rule(id);
    if (!rule_holds(r, jax())) return;  // a rule of another JAX release (rules.def since/until)
    const Stage s = stage.value_or(r.stage);
    if (log_) log_->push_back(ExplainStep{id, s, where, violated});
    if (!violated) return;
    throw Rejected{Diagnostic{to_string(s), std::string(r.exception),
                              fill_template(r.message, holes()), std::string(r.name),
                              where.rfind("$", 0) == 0 ? where : std::string()}};
  }
  void check(RuleId id, bool violated, const std::string& where,
             std::optional<Stage> stage = std::nullopt) {
    check(
        id, violated, where, [] { return Holes{}; }, stage);
  }

  // Explaining: what the execution found worth saying besides the rules (a store racing with a
  // write of its SMEM, execution_store_groups.cpp).
  bool explaining() const { return log_ != nullptr; }
  std::vector<std::string> notes;

  bool lane() const { return c.target.semantics == Semantics::kLane; }
  int arch_major() const { return collfuzz::arch_major(c.target.arch); }
  JaxVersion jax() const { return c.target.jax; }
  bool jax_at_least(JaxVersion v) const { return at_least(jax(), v); }

 private:
  std::vector<ExplainStep>* log_;
};

}  // namespace collfuzz::ref
