// The rule table is well formed, and the docs that embed it are in step.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "oracles/reference/rules.h"

namespace collfuzz {
namespace {

TEST(RuleTable, IdsAreUniqueAndDotted) {
  std::set<std::string_view> seen;
  for (const Rule& r : all_rules()) {
    EXPECT_TRUE(seen.insert(r.name).second) << "duplicate id " << r.name;
    EXPECT_NE(r.name.find('.'), std::string_view::npos) << r.name;
    EXPECT_FALSE(r.exception.empty()) << r.name;
    EXPECT_FALSE(r.summary.empty()) << r.name;
    EXPECT_EQ(find_rule(r.name), &r);
  }
}

TEST(RuleTable, TemplatesMatchTheirOwnFilledMessages) {
  // Filling every hole with a plausible value gives a message the matcher attributes to the rule.
  for (const Rule& r : all_rules()) {
    std::string filled;
    for (std::size_t i = 0; i < r.message.size(); ++i) {
      if (r.message[i] == '{') {
        const auto close = r.message.find('}', i);
        filled += "(2, 1)";
        i = close;
      } else {
        filled += r.message[i];
      }
    }
    EXPECT_TRUE(rule_matches(r, r.exception, filled)) << r.name << ": " << filled;
  }
}

TEST(RuleTable, DocsEmbedTheTable) {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) + "/docs/rules.md");
  ASSERT_TRUE(in) << "docs/rules.md is missing";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const auto begin = doc.find("<!-- rules:begin -->\n");
  const auto end = doc.find("<!-- rules:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string table = doc.substr(begin + 21, end - begin - 21);
  EXPECT_EQ(table, rules_markdown())
      << "regenerate the table: build/release/collfuzz rules --markdown";
}

}  // namespace
}  // namespace collfuzz
