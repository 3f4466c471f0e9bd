// collfuzz explain: the rules checked for a case, in the order JAX checks them, and which fired.
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/jax_random.h"
#include "harness/core/terminal_text.h"
#include "harness/lowering/lowering.h"
#include "harness/lowering/plan_json.h"
#include "harness/runner/barrier_imbalance.h"
#include "harness/runner/outcome_text.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rule_fix.h"

namespace collfuzz::cli {

int cmd_explain(const Flags& flags, const std::string& case_file) {
  const Case c = with_jax_flag(load_case_file(case_file), parse_jax_flag(flags.jax));
  if (flags.plan) {
    // The lowering follows the compiler (profile mosaic) only.
    const lowering::LoweringResult lowered = lowering::lower_case(c);
    if (lowered.diagnostic) {
      std::cout << nlohmann::json{{"case", c.name},
                                  {"diagnostic",
                                   {{"stage", lowered.diagnostic->stage},
                                    {"exception", lowered.diagnostic->exception},
                                    {"message", lowered.diagnostic->message},
                                    {"rule", lowered.diagnostic->rule}}}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << nlohmann::json{{"case", c.name}, {"plan", lowering::plan_to_json(lowered.plan)}}
                       .dump(2)
                << "\n";
    }
    return 0;
  }
  const Profile profile = parse_profile_flag(flags.profile, c.target.profile);
  const Prediction p = predict(c, profile, /*explain=*/true);
  if (flags.json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : p.steps) {
      const Rule& r = rule(s.rule);
      nlohmann::json step = {
          {"rule", r.name}, {"stage", to_string(s.stage)}, {"where", s.where}, {"fired", s.fired}};
      if (s.fired) step["fix"] = rule_fix(r.id);
      steps.push_back(std::move(step));
    }
    nlohmann::json out{{"case", c.name}, {"profile", to_string(profile)}, {"steps", steps}};
    for (const ArraySpec& a : c.inputs) {
      if (a.fill.pattern == FillPattern::kJaxRandom)
        out["drawn_inputs"].push_back({{"input", a.name}, {"python", jax_random_python(a)}});
    }
    if (!p.notes.empty()) out["notes"] = p.notes;
    if (const auto b = first_unbalanced_barrier(c, p.outcome)) {
      nlohmann::json contributors = nlohmann::json::array();
      for (const auto& k : b->contributors)
        contributors.push_back({{"op", k.op}, {"what", k.what}, {"here", k.here}});
      out["unbalanced_barrier"] = {{"rank", b->rank},
                                   {"coords", b->coords},
                                   {"barrier", b->barrier},
                                   {"findings", b->findings},
                                   {"contributors", contributors}};
      if (b->record) {
        const auto v = [](const std::optional<std::int64_t>& x) {
          return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
        };
        out["unbalanced_barrier"]["counts"] = {
            {"count", v(b->record->count)},   {"arrivals", v(b->record->arrivals)},
            {"armed", v(b->record->armed)},   {"received", v(b->record->received)},
            {"phases", v(b->record->phases)}, {"pending", v(b->record->pending)},
            {"tx", v(b->record->tx)}};
      }
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "Case " << terminal_text(c.name) << ", predicting " << to_string(profile) << " ("
            << to_string(c.target.arch) << ", " << to_string(c.target.semantics)
            << " semantics); rules follow JAX " << to_string(c.target.jax) << ".\n";
  for (const ArraySpec& a : c.inputs) {
    if (a.fill.pattern == FillPattern::kJaxRandom) {
      std::cout << "Input " << terminal_text(a.name) << " = " << jax_random_python(a)
                << " (a jax_random fill: JAX's numbers, bit for bit).\n";
    }
  }
  std::cout << "\n";
  std::string last_stage;
  int n = 0;
  for (const auto& s : p.steps) {
    const Rule& r = rule(s.rule);
    const std::string stage = to_string(s.stage);
    if (stage != last_stage) {
      std::cout << "[" << stage << "]\n";
      last_stage = stage;
    }
    std::cout << "  " << (s.fired ? "FIRED " : "ok    ") << r.name << " at "
              << terminal_text(s.where) << "\n"
              << "        " << r.summary << " (spec " << r.section << ")\n";
    if (s.fired) std::cout << "        fix: " << rule_fix(r.id) << "\n";
    ++n;
  }
  std::cout << "\n" << n << " rule check(s). Outcome:\n" << describe_outcome(p.outcome, &c);
  for (const std::string& note : p.notes) std::cout << "\n" << terminal_text(note) << "\n";
  if (const auto imbalance = first_unbalanced_barrier(c, p.outcome))
    std::cout << "\n" << describe_imbalance(*imbalance);
  return 0;
}

}  // namespace collfuzz::cli
