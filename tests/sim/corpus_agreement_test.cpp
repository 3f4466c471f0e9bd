// For every case of the corpus (corpus/, and the JAX probes in corpus-jax-probes/), found when the
// test runs, the simulator agrees with the reference checker's prediction for profile mosaic on all
// three oracles, and with the expected outcome a corpus case stores for profile mosaic.
// Disagreements that are findings (the JAX source supports the simulator) are listed in
// tests/sim/known_divergences.json with the reason; every other disagreement fails the test.
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/core/stored_expectation.h"
#include "harness/runner/case_runner.h"
#include "harness/sim/simulator.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> case_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"corpus", "corpus-jax-probes"}) {
    const fs::path root = fs::path(COLLFUZZ_SOURCE_DIR) / dir;
    if (!fs::is_directory(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// (case name, signature) pairs that are known findings.
std::set<std::pair<std::string, std::string>> known_divergences() {
  std::set<std::pair<std::string, std::string>> known;
  std::ifstream in(fs::path(COLLFUZZ_SOURCE_DIR) / "tests/sim/known_divergences.json");
  if (!in) return known;
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const auto& d : j.at("divergences")) known.emplace(d.at("case"), d.at("signature"));
  return known;
}

TEST(CorpusAgreement, SimulatorAgreesWithTheReferenceOnEveryCase) {
  const auto files = case_files();
  if (files.empty()) GTEST_SKIP() << "no corpus cases";
  const auto known = known_divergences();
  sim::Simulator simulator;
  int compared = 0;
  int unavailable = 0;
  for (const fs::path& file : files) {
    Case c;
    try {
      c = load_case_file(file);
    } catch (const InputError& e) {
      continue;  // a file the parser refuses is the corpus tests' business, not the simulator's
    }
    c.target.profile = Profile::kMosaic;
    const Outcome expected = predict(c, Profile::kMosaic).outcome;
    Outcome actual = simulator.run(c);
    actual.executor = "sim";
    if (actual.kind == OutcomeKind::kUnavailable) {
      ++unavailable;
      continue;
    }
    ++compared;
    const Verdict v = compare(c, expected, actual);
    for (const Mismatch& m : v.mismatches) {
      if (known.count({c.name, m.signature})) continue;
      ADD_FAILURE() << file.string() << ": " << m.signature << ": " << m.detail;
    }
  }
  std::cout << compared << " cases compared, " << unavailable << " unavailable to the simulator\n";
}

TEST(CorpusAgreement, SimulatorMatchesTheStoredExpectations) {
  const auto files = case_files();
  const auto known = known_divergences();
  sim::Simulator simulator;
  int checked = 0;
  for (const fs::path& file : files) {
    Case c;
    nlohmann::json expect;
    try {
      c = load_case_file(file, &expect);
    } catch (const InputError&) {
      continue;
    }
    const nlohmann::json* mosaic =
        stored_expectation_for(expect, Profile::kMosaic, c.target.profile);
    if (!mosaic) continue;
    Outcome stored = outcome_from_json(*mosaic, c, file.string() + ":$.expect");
    stored.profile = Profile::kMosaic;
    complete_stored_rule(stored, predict(c, Profile::kMosaic).outcome);
    Outcome actual = simulator.run(c);
    actual.executor = "sim";
    if (actual.kind == OutcomeKind::kUnavailable) continue;
    ++checked;
    for (const Mismatch& m : compare(c, stored, actual).mismatches) {
      if (known.count({c.name, m.signature})) continue;
      ADD_FAILURE() << file.string() << " (stored expectation): " << m.signature << ": "
                    << m.detail;
    }
  }
  if (checked == 0) GTEST_SKIP() << "no stored mosaic expectations";
  std::cout << checked << " stored expectations checked\n";
}

}  // namespace
}  // namespace collfuzz
