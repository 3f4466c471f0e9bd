#include "oracles/reference/rule_fix.h"

namespace collfuzz {

std::string_view rule_fix(RuleId id) {
  // No default: a rule of rules.def without a row in rule_fixes.def does not compile (-Wswitch).
  switch (id) {
#define COLLFUZZ_RULE_FIX(Enum, fix) \
  case RuleId::Enum:                 \
    return fix;
#include "oracles/reference/rule_fixes.def"
#undef COLLFUZZ_RULE_FIX
    case RuleId::kCount:
      break;
  }
  return "";
}

std::string rule_fixes_markdown() {
  std::string out = "| rule | how to fix the kernel |\n|---|---|\n";
  for (const Rule& r : all_rules()) {
    out += "| `" + std::string(r.name) + "` | " + std::string(rule_fix(r.id)) + " |\n";
  }
  return out;
}

}  // namespace collfuzz
