// The corpus is the contract: every rule of the table fires for at least one corpus case, for a
// profile that raises it, and every corpus case stores an expected outcome.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "harness/core/case_json.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(COLLFUZZ_SOURCE_DIR) + "/corpus")) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  }
  return files;
}

TEST(Corpus, EveryRuleFiresForSomeCase) {
  std::map<std::string, std::string> fired;  // rule -> a case that fires it
  for (const auto& file : corpus_files()) {
    const Case c = load_case_file(file);
    const Outcome o = predict(c, c.target.profile).outcome;
    if (o.kind == OutcomeKind::kRejected)
      fired.emplace(o.diagnostic->rule, file.filename().string());
  }
  std::vector<std::string> missing;
  for (const Rule& r : all_rules()) {
    if (!fired.count(std::string(r.name))) missing.push_back(std::string(r.name));
  }
  EXPECT_TRUE(missing.empty()) << "rules no corpus case fires: "
                               << ::testing::PrintToString(missing);
}

TEST(Corpus, EveryCaseStoresItsExpectation) {
  const auto files = corpus_files();
  EXPECT_GE(files.size(), 60u);
  for (const auto& file : files) {
    nlohmann::json expect;
    load_case_file(file, &expect);
    EXPECT_FALSE(expect.is_null()) << file << " has no expect";
  }
}

}  // namespace
}  // namespace collfuzz
