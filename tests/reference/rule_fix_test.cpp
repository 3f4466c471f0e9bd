// Every rule has a fix line, and docs/rules.md embeds the fix table.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "oracles/reference/rule_fix.h"

namespace collfuzz {
namespace {

TEST(RuleFix, EveryRuleHasOne) {
  for (const Rule& r : all_rules()) {
    EXPECT_GE(rule_fix(r.id).size(), 10u) << r.name;
  }
}

TEST(RuleFix, DocsEmbedTheTable) {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) + "/docs/rules.md");
  ASSERT_TRUE(in) << "docs/rules.md is missing";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const std::string open = "<!-- rule-fixes:begin -->\n";
  const auto begin = doc.find(open);
  const auto end = doc.find("<!-- rule-fixes:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(begin + open.size(), end - begin - open.size()), rule_fixes_markdown())
      << "regenerate the table: tools/update_rules_doc.py";
}

}  // namespace
}  // namespace collfuzz
