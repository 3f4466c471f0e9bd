// Stored expectations given as exception and message_regex (docs/case-format.md, "Expectations"),
// as JAX tests' assertRaisesRegex writes them: a regex that occurs in the predicted message
// passes, one that does not fails naming the predicted rule, an invalid one is bad input.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/message_regex.h"
#include "harness/core/outcome_json.h"
#include "harness/runner/case_runner.h"

namespace collfuzz {
namespace {

using nlohmann::json;

const char* kCase = "copy.leader_tracked.needs_collective_axes__partitioned.json";

Case corpus_case() { return load_case_file(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/" + kCase); }

json regex_expect(const std::string& exception, const std::string& regex) {
  return json{{"kind", "rejected"},
              {"diagnostic", {{"exception", exception}, {"message_regex", regex}}}};
}

CaseReport replay(const Case& c, const json& expect) {
  CaseRunner runner({"reference"}, ExecutorOptions{}, DiagnosticLevel::kMessage);
  return runner.run(c, &expect, kCase);
}

TEST(StoredMessageRegex, SearchesTheMessageAsReSearchDoes) {
  const std::string msg = "`collective_axes` must be specified when `leader_tracked` is set";
  EXPECT_TRUE(message_regex_matches("must be specified", msg));  // search, not fullmatch
  EXPECT_TRUE(message_regex_matches("^`collective_axes` must .* set$", msg));
  EXPECT_TRUE(message_regex_matches(R"(\bleader_tracked\b)", msg));
  EXPECT_FALSE(message_regex_matches("^must", msg));
  EXPECT_FALSE(message_regex_matches("needs a barrier", msg));
}

TEST(StoredMessageRegex, AMatchingRegexFindsThePredictedRuleAndPasses) {
  const Case c = corpus_case();
  const CaseReport r = replay(c, regex_expect("ValueError", "must be specified when `?leader"));
  ASSERT_TRUE(r.stored);
  EXPECT_TRUE(r.stored->agrees()) << (r.stored->mismatches.empty()
                                          ? std::string()
                                          : r.stored->mismatches[0].detail);
  EXPECT_EQ(r.stored->compared, 1);
}

TEST(StoredMessageRegex, ARegexThatDoesNotOccurFailsNamingThePredictedRule) {
  const Case c = corpus_case();
  for (const auto& [exception, regex] : std::vector<std::pair<std::string, std::string>>{
           {"ValueError", "^specified"}, {"TypeError", "must be specified"}}) {
    const CaseReport r = replay(c, regex_expect(exception, regex));
    ASSERT_TRUE(r.stored);
    ASSERT_FALSE(r.stored->agrees()) << regex;
    const std::string detail = r.stored->mismatches[0].detail;
    EXPECT_NE(detail.find("/" + regex + "/"), std::string::npos) << detail;
    EXPECT_NE(detail.find("copy.leader_tracked.needs_collective_axes"), std::string::npos)
        << detail;
  }
}

TEST(StoredMessageRegex, ARuleGivenWithTheRegexIsHeldAsWell) {
  const Case c = corpus_case();
  json expect = regex_expect("ValueError", "leader_tracked");
  expect["diagnostic"]["rule"] = "copy.leader_tracked.needs_collective_axes";
  EXPECT_TRUE(replay(c, expect).stored->agrees());
  expect["diagnostic"]["message_regex"] = "leader-tracked copies";
  const CaseReport r = replay(c, expect);
  ASSERT_FALSE(r.stored->agrees());
  EXPECT_EQ(r.stored->mismatches[0].kind, "message");
}

std::string read_error(const json& expect) {
  try {
    outcome_from_json(expect, corpus_case(), "f.json:$.expect");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(StoredMessageRegex, AnInvalidRegexIsBadInputNamingTheField) {
  for (const std::string bad : {"(unclosed", "[z-a]", "(?P<name>x)", "a{2,1}", "", "(?i)abc",
                                "(?<=a)b", "\\Aabc", "x\\Z"}) {
    const std::string e = read_error(regex_expect("ValueError", bad));
    EXPECT_NE(e.find("f.json:$.expect.diagnostic.message_regex"), std::string::npos)
        << bad << ": " << e;
  }
  json both = regex_expect("ValueError", "x");
  both["diagnostic"]["message"] = "x";
  EXPECT_NE(read_error(both).find("not both"), std::string::npos);
  EXPECT_EQ(read_error(regex_expect("ValueError", "a\\\\Z")), "");  // an escaped backslash, then Z
  // Written back as it was read.
  const Outcome o = outcome_from_json(regex_expect("ValueError", "a.*b"), corpus_case(), "$");
  EXPECT_EQ(outcome_to_json(o)["diagnostic"]["message_regex"], "a.*b");
  EXPECT_FALSE(outcome_to_json(o)["diagnostic"].contains("message"));
}

}  // namespace
}  // namespace collfuzz
