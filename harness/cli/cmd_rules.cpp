// collfuzz rules: the rule table, as text, Markdown (docs/rules.md) or JSON.
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/cli/commands.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rule_fix.h"
#include "oracles/reference/rules.h"

namespace collfuzz::cli {

int cmd_rules(const Flags& flags) {
  // --jax V: only the rules that hold in release V (rules.def since/until).
  const std::optional<JaxVersion> jax = parse_jax_flag(flags.jax);
  const auto listed = [&](const Rule& r) { return !jax || rule_holds(r, *jax); };
  if (flags.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Rule& r : all_rules()) {
      if (!listed(r)) continue;
      out.push_back({{"id", r.name},
                     {"stage", to_string(r.stage)},
                     {"exception", r.exception},
                     {"message", r.message},
                     {"section", r.section},
                     {"profiles", to_string(r.profiles)},
                     {"basis", to_string(r.basis)},
                     {"summary", r.summary},
                     {"fix", rule_fix(r.id)},
                     {"since", r.since},
                     {"until", r.until}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (flags.markdown) {
    std::cout << (flags.changes ? rule_changes_markdown()
                  : jax         ? rules_markdown(*jax)
                                : rules_markdown());
    return 0;
  }
  for (const Rule& r : all_rules()) {
    if (!listed(r)) continue;
    std::cout << r.name << " [" << to_string(r.stage) << ", " << to_string(r.profiles) << "] "
              << r.exception << ": " << r.message << "\n    " << r.summary
              << "\n    fix: " << rule_fix(r.id) << "\n";
  }
  return 0;
}

}  // namespace collfuzz::cli
