// collfuzz rules: the rule table, as text, Markdown (docs/rules.md) or JSON.
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/cli/commands.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rules.h"

namespace collfuzz::cli {

int cmd_rules(const Flags& flags) {
  if (flags.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Rule& r : all_rules()) {
      out.push_back({{"id", r.name},
                     {"stage", to_string(r.stage)},
                     {"exception", r.exception},
                     {"message", r.message},
                     {"section", r.section},
                     {"profiles", to_string(r.profiles)},
                     {"basis", to_string(r.basis)},
                     {"summary", r.summary}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (flags.markdown) {
    std::cout << rules_markdown();
    return 0;
  }
  for (const Rule& r : all_rules()) {
    std::cout << r.name << " [" << to_string(r.stage) << ", " << to_string(r.profiles) << "] "
              << r.exception << ": " << r.message << "\n    " << r.summary << "\n";
  }
  return 0;
}

}  // namespace collfuzz::cli
