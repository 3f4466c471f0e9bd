// How to fix a kernel that a rule rejects (rule_fixes.def): one line per rule.
#pragma once

#include <string>
#include <string_view>

#include "oracles/reference/rules.h"

namespace collfuzz {

std::string_view rule_fix(RuleId id);

// The fix lines as a Markdown table (docs/rules.md "How to fix"; a test keeps the two in step).
std::string rule_fixes_markdown();

}  // namespace collfuzz
