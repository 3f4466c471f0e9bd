// Every rule of rules.def fires on the generated cases: 100,000 cases of a fixed seed, each
// predicted for both profiles and every modelled JAX release, hit every rule id (docs/fuzzing.md:
// how the generators are weighted to reach each). The predictions run in a child process, so that a
// reference that crashes on a case is reported with the case's name instead of ending the test.
#include <gtest/gtest.h>

#include "generators/case_stream.h"
#include "generators/rule_coverage.h"
#include "harness/campaign/isolated_loop.h"
#include "harness/campaign/shared_memory.h"
#include "oracles/reference/reference.h"

namespace collfuzz::generators {
namespace {

constexpr std::uint64_t kSeed = 20261129;
constexpr std::uint64_t kCases = 100000;

TEST(RuleCoverage, OneHundredThousandCasesOfAFixedSeedHitEveryRule) {
  campaign::SharedMemory<RuleCoverage> coverage;
  const auto crashes = campaign::run_isolated(0, kCases, [&](std::uint64_t i) {
    // Every modelled JAX release: a rule of one release only (rules.def since/until) fires there.
    Case c = generate_case(kSeed, i);
    for (JaxVersion v : known_jax_versions()) {
      c.target.jax = v;
      for (Profile p : {Profile::kMosaic, Profile::kInterpret})
        coverage->record(p, predict(c, p).outcome);
    }
  });
  std::string missing;
  for (RuleId id : coverage->rules_never_fired()) missing += " " + std::string(rule(id).name);
  EXPECT_TRUE(missing.empty()) << "rules that never fired on " << kCases << " cases of seed "
                               << kSeed << ":" << missing << "\n"
                               << coverage->to_text();
  // A reference crash is a finding about the reference (tests/generators/found/), reported here
  // and not failed on: the coverage above is what this test is about.
  if (!crashes.empty()) {
    std::cout << "note: the reference crashed on " << crashes.size() << " of " << kCases
              << " cases, first " << generated_case_name(kSeed, crashes.front().index) << "\n";
  }
}

}  // namespace
}  // namespace collfuzz::generators
