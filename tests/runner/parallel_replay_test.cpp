// `collfuzz replay --jobs N` (replay_parallel): the same checks, counts and order as the
// sequential replay, whatever order the threads finish in; every check reported once, in file
// order; a bad case file is still one failed check at its place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "harness/runner/baseline.h"
#include "harness/runner/case_runner.h"
#include "harness/runner/replay.h"

namespace collfuzz {
namespace {

// The corpus's case files: enough of them that two threads interleave.
std::vector<std::filesystem::path> corpus_files() {
  auto files = collect_case_files({std::string(COLLFUZZ_SOURCE_DIR) + "/corpus"});
  if (files.size() > 80) files.resize(80);
  return files;
}

struct ReplayRun {
  ReplaySummary summary;
  std::vector<std::string> reported;  // file|executor, in on_check order
};

ReplayRun run_with(const std::vector<std::filesystem::path>& files, std::size_t jobs) {
  std::vector<std::unique_ptr<CaseRunner>> runners;
  std::vector<CaseRunner*> ptrs;
  for (std::size_t j = 0; j < jobs; ++j) {
    runners.push_back(std::make_unique<CaseRunner>(std::vector<std::string>{"reference", "sim"},
                                                   ExecutorOptions{}, DiagnosticLevel::kMessage));
    ptrs.push_back(runners.back().get());
  }
  ReplayRun r;
  r.summary = replay_parallel(
      files, ptrs, [&](const CheckResult& c) { r.reported.push_back(c.file + "|" + c.executor); });
  return r;
}

TEST(ParallelReplay, SameChecksInTheSameOrderAsSequential) {
  const auto files = corpus_files();
  ASSERT_GT(files.size(), 10u);
  const ReplayRun one = run_with(files, 1);
  const ReplayRun three = run_with(files, 3);
  EXPECT_EQ(one.summary.passed, three.summary.passed);
  EXPECT_EQ(one.summary.failed, three.summary.failed);
  EXPECT_EQ(one.summary.skipped, three.summary.skipped);
  EXPECT_EQ(one.summary.counts.passed(), three.summary.counts.passed());
  EXPECT_EQ(one.summary.counts.skipped(), three.summary.counts.skipped());
  ASSERT_EQ(one.summary.checks.size(), three.summary.checks.size());
  for (std::size_t i = 0; i < one.summary.checks.size(); ++i) {
    const CheckResult& a = one.summary.checks[i];
    const CheckResult& b = three.summary.checks[i];
    EXPECT_EQ(a.file, b.file) << i;
    EXPECT_EQ(a.executor, b.executor) << i;
    EXPECT_EQ(a.status, b.status) << a.file;
    EXPECT_EQ(a.message, b.message) << a.file;
  }
  EXPECT_EQ(one.reported, three.reported);
  // Every check reported exactly once, and reported as it is stored.
  ASSERT_EQ(three.reported.size(), three.summary.checks.size());
  for (std::size_t i = 0; i < three.reported.size(); ++i)
    EXPECT_EQ(three.reported[i],
              three.summary.checks[i].file + "|" + three.summary.checks[i].executor);
  EXPECT_GT(three.summary.passed, 0);
}

TEST(ParallelReplay, ABadCaseFileIsOneFailedCheckAtItsPlace) {
  auto files = corpus_files();
  files.resize(6);
  const auto bad = std::filesystem::temp_directory_path() / "collfuzz_parallel_replay_bad.json";
  { std::ofstream(bad) << "{\"mesh\": 3}"; }
  files.insert(files.begin() + 3, bad);
  const ReplayRun r = run_with(files, 2);
  EXPECT_TRUE(r.summary.bad_input);
  int parse_failures = 0;
  for (std::size_t i = 0; i < r.summary.checks.size(); ++i) {
    const CheckResult& c = r.summary.checks[i];
    if (c.executor != "parse") continue;
    ++parse_failures;
    EXPECT_EQ(c.file, bad.string());
    EXPECT_EQ(c.status, CheckResult::Status::kFail);
    // Files 0..2 come before it: their checks are reported first.
    ASSERT_GT(i, 0u);
    EXPECT_EQ(r.summary.checks[i - 1].file, files[2].string());
  }
  EXPECT_EQ(parse_failures, 1);
  std::filesystem::remove(bad);
}

TEST(ParallelReplay, MoreRunnersThanFilesIsFine) {
  auto files = corpus_files();
  files.resize(2);
  const ReplayRun r = run_with(files, 4);
  EXPECT_EQ(r.reported.size(), r.summary.checks.size());
  EXPECT_GT(r.summary.passed, 0);
}

// --also-compare-profile: the same runs held against a second profile, counted apart; the first
// comparison is what it is without it, and the second baseline's entries make its divergences
// known (a listed one that no longer happens fails).
TEST(AlsoCompareProfile, ASecondComparisonFromTheSameRuns) {
  const std::vector<std::filesystem::path> files = {
      std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/compile.tmem.pre_blackwell__sm90a.json",
      std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/mode.plain__two_phases.json"};
  auto runner = [] {
    return std::make_unique<CaseRunner>(std::vector<std::string>{"sim"}, ExecutorOptions{},
                                        DiagnosticLevel::kMessage);
  };
  auto plain = runner();
  const ReplaySummary without = replay(files, *plain, [](const CheckResult&) {});
  EXPECT_TRUE(without.also_checks.empty());

  auto also = runner();
  also->also_compare_against(Profile::kInterpret, nullptr);
  std::vector<std::string> seen;
  const ReplaySummary with = replay(files, *also, [&](const CheckResult& c) {
    seen.push_back(c.executor + "|" + c.also_profile);
  });
  EXPECT_EQ(with.passed, without.passed);
  EXPECT_EQ(with.failed, without.failed);
  ASSERT_EQ(with.also_checks.size(), 2u);  // the sim's profile (mosaic) is not interpret
  EXPECT_EQ(with.also_checks[0].executor, "sim");
  EXPECT_EQ(with.also_checks[0].also_profile, "interpret");
  // Interpret mode has no ptxas: the compiler's refusal of TMEM on sm_90a is a divergence.
  EXPECT_EQ(with.also_checks[0].status, CheckResult::Status::kFail);
  EXPECT_EQ(with.also_checks[1].status, CheckResult::Status::kPass);
  EXPECT_EQ(with.also_failed, 1);
  EXPECT_EQ(with.also_passed, 1);
  EXPECT_EQ(with.also_summary().failed, 1);
  EXPECT_EQ(seen.size(), with.checks.size() + with.also_checks.size());

  // Listed in the second baseline: known, so it passes; the first comparison is unchanged.
  const auto dir = std::filesystem::temp_directory_path() / "collfuzz_also_compare";
  std::filesystem::create_directories(dir);
  const auto file = dir / "baseline.json";
  std::ofstream(file)
      << R"({"format": 1, "divergences": [{"case": "compile.tmem.pre_blackwell__sm90a",
      "executor": "sim", "signature": ")"
      << with.also_checks[0].signature << R"(", "reason": "test"}]})";
  const Baseline baseline = Baseline::load(file);
  auto listed = runner();
  listed->also_compare_against(Profile::kInterpret, &baseline);
  const ReplaySummary known = replay(files, *listed, [](const CheckResult&) {});
  EXPECT_EQ(known.also_failed, 0);
  EXPECT_EQ(known.also_passed, 2);
  EXPECT_EQ(known.failed, without.failed);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz
