// The lowering shares only rule ids with the reference checker: each must name a rule of the table.
#include <gtest/gtest.h>

#include "harness/lowering/rule_ids.h"
#include "oracles/reference/rules.h"

namespace collfuzz {
namespace {

TEST(RuleIds, EveryIdTheLoweringRaisesIsInTheRuleTable) {
  for (std::string_view id : lowering::rule_id::kAll) EXPECT_NE(find_rule(id), nullptr) << id;
}

}  // namespace
}  // namespace collfuzz
