// The zero-mutation sweep: every number of every stored case file (corpus/, corpus-jax-probes/,
// tests/generators/found/), its expected outcome included, is replaced in turn by 0, -1, 2^64 and
// 1e400, and the file goes the way `collfuzz run --executors reference,sim` takes it: the bounded
// reader, the case parser, the expected outcome's parser, the reference (both profiles) and the
// simulator, held against each other by the oracles. Each mutant must run or be refused with an
// InputError (exit 2); any other exception fails the test, and a signal names the mutant that
// raised it before the process dies. Long arrays of numbers (data: fills, expected values) are
// sampled, their first 8 elements and their last (number_pointers).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <unistd.h>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/runner/baseline.h"
#include "harness/runner/case_runner.h"
#include "tests/support/sanitized.h"

namespace collfuzz {
namespace {

using nlohmann::json;

// The mutant being run, for the signal handler.
char g_current[1024];

extern "C" void report_signal(int sig) {
  const char prefix[] = "\nhostile_input_test: signal while running the mutant ";
  [[maybe_unused]] auto w = ::write(2, prefix, sizeof prefix - 1);
  w = ::write(2, g_current, std::strlen(g_current));
  w = ::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_signal_reporter() {
  for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT}) std::signal(sig, report_signal);
}

std::vector<std::filesystem::path> stored_case_files() {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"corpus", "corpus-jax-probes", "tests/generators/found"}) {
    const auto d = std::filesystem::path(COLLFUZZ_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(d)) continue;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      if (e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The numbers of `j`. A long array of numbers is data (a `values` fill, an expected region's
// values): every element takes the same path through the reader, so its first 8 and its last
// stand for it (the ASan build would spend minutes on a 4,096-number fill otherwise).
constexpr std::size_t kDataArraySample = 8;

void number_pointers(const json& j, const json::json_pointer& at,
                     std::vector<json::json_pointer>& out) {
  if (j.is_number()) {
    out.push_back(at);
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) number_pointers(v, at / k, out);
  } else if (j.is_array()) {
    const bool data = j.size() > 2 * kDataArraySample &&
                      std::all_of(j.begin(), j.end(), [](const json& v) { return v.is_number(); });
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (data && i >= kDataArraySample && i + 1 < j.size()) continue;
      number_pointers(j[i], at / i, out);
    }
  }
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// `doc` as text, with the number at `at` written as `literal` (which need not fit a double).
std::string mutant_text(json doc, const json::json_pointer& at, const std::string& literal) {
  static const std::string kMarker = "@@collfuzz-mutant@@";
  doc[at] = kMarker;
  std::string text = doc.dump();
  const std::string quoted = "\"" + kMarker + "\"";
  text.replace(text.find(quoted), quoted.size(), literal);
  return text;
}

// Under the sanitizers (the debug build: ASan and UBSan at -O0 make each mutant's run about 60x
// slower), a bounded share of the stored files, evenly spread in name order (every 10th of 396):
// the release build's ctest mutates every file, and the sanitized share still puts every reader,
// parser and executor path under ASan (the files of one family are spread over it; the libFuzzer
// targets mutate the case files at random under the same sanitizers), at a cost that does not grow
// with the corpus. Seen from ci/test: 234 s of the debug ctest's 1,018 s of CPU at 2026-12-04 with
// every other file; 345 s of 1,466 s at 2026-12-06 on a slow day; 228 s of 1,276 s with 100 files
// (docs/performance.md, "Build time, 2026-12-06 (night)").
constexpr std::size_t kSanitizedFiles = 40;
std::size_t file_stride(std::size_t files) {
  if (!collfuzz::testing::kSanitized) return 1;
  return std::max<std::size_t>(2, (files + kSanitizedFiles - 1) / kSanitizedFiles);
}

struct SweepCounts {
  std::int64_t mutants = 0;
  std::int64_t ran = 0;
  std::map<std::string, std::int64_t> refused_by_literal;
};

TEST(HostileInput, EveryNumberOfEveryStoredCaseMutatedRunsOrIsRefused) {
  install_signal_reporter();
  const auto files = stored_case_files();
  ASSERT_GT(files.size(), 100u);
  const std::size_t stride = file_stride(files.size());
  // 2^64 does not fit 64 bits; 1e400 does not fit a double.
  const std::vector<std::string> literals = {"0", "-1", "18446744073709551616", "1e400"};
  CaseRunner runner({"reference", "sim"}, ExecutorOptions{}, DiagnosticLevel::kMessage, nullptr);
  SweepCounts counts;
  std::vector<std::string> failures;
  for (std::size_t f = 0; f < files.size(); f += stride) {
    const auto& file = files[f];
    const json doc = parse_json_bounded(read_text(file), file.string());
    std::vector<json::json_pointer> numbers;
    number_pointers(doc, json::json_pointer(), numbers);
    for (const auto& at : numbers) {
      for (const auto& literal : literals) {
        const std::string name =
            file.filename().string() + " with " + at.to_string() + " = " + literal;
        std::snprintf(g_current, sizeof g_current, "%s", name.c_str());
        ++counts.mutants;
        try {
          const json j = parse_json_bounded(mutant_text(doc, at, literal), file.string());
          const Case c = case_from_json(j);
          const json* expect = j.contains("expect") ? &j["expect"] : nullptr;
          const CaseReport report = runner.run(c, expect, file.string());
          // The other profile's prediction too: replay --compare-profile asks for it.
          runner.reference(
              c, c.target.profile == Profile::kMosaic ? Profile::kInterpret : Profile::kMosaic);
          ++counts.ran;
        } catch (const InputError&) {
          ++counts.refused_by_literal[literal];
        } catch (const std::exception& e) {
          failures.push_back(name + ": " + typeid(e).name() + ": " + e.what());
        }
      }
    }
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  std::printf("%lld mutants of %zu files (every %zu of %zu): %lld ran, refused:",
              static_cast<long long>(counts.mutants), (files.size() + stride - 1) / stride, stride,
              files.size(), static_cast<long long>(counts.ran));
  for (const auto& [literal, n] : counts.refused_by_literal)
    std::printf(" %s %lld", literal.c_str(), static_cast<long long>(n));
  std::printf("\n");
  // Numbers beyond the reader's range are refused, whatever field they are in.
  const auto total_per_literal = counts.mutants / static_cast<std::int64_t>(literals.size());
  EXPECT_EQ(counts.refused_by_literal["1e400"], total_per_literal);
  EXPECT_GT(counts.ran, 0);
}

// Baselines go through the same reader and check their format number.
TEST(HostileInput, BadBaselinesAreRefusedWithTheirPath) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("collfuzz-baseline-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"format": 0, "divergences": []})", ":$.format"},
      {R"({"format": 1e400, "divergences": []})", ":$.format"},
      {R"({"format": 1, "divergences": [], "divergences": []})", ":$.divergences"},
      {R"({"format": 1, "divergences": [{"case": "*", "executor": 7}]})",
       ":$.divergences[0].executor"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto file = dir / ("b" + std::to_string(i) + ".json");
    std::ofstream(file) << cases[i].first;
    try {
      Baseline::load(file);
      ADD_FAILURE() << cases[i].first;
    } catch (const InputError& e) {
      EXPECT_EQ(e.path(), file.string() + cases[i].second) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz
