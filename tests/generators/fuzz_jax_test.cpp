// `collfuzz fuzz --jax V` (issue 12): generated cases are pinned to V, and the campaign's case
// check never compares a pinned case with an executor that announces another JAX release.
#include <gtest/gtest.h>

#include <memory>

#include "generators/case_stream.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/confirmation.h"
#include "harness/core/case_json.h"

namespace collfuzz::campaign {
namespace {

TEST(FuzzJax, PinnedGenerationStampsEveryCaseAndChangesNothingElse) {
  generators::pin_generated_jax(JaxVersion::k0_12_0_1);
  for (std::uint64_t i = 0; i < 50; ++i) {
    const Case c = generators::generate_case(5, i);
    EXPECT_TRUE(c.target.jax_pinned);
    EXPECT_EQ(c.target.jax, JaxVersion::k0_12_0_1);
    const Case s = generators::generate_shrinkable(5, i).value();
    EXPECT_TRUE(s.target.jax_pinned);
    EXPECT_EQ(case_to_json(s), case_to_json(c));
  }
  const nlohmann::json pinned = case_to_json(generators::generate_case(5, 7));
  generators::pin_generated_jax(std::nullopt);
  const Case free = generators::generate_case(5, 7);
  EXPECT_FALSE(free.target.jax_pinned);
  nlohmann::json unpinned = case_to_json(free);
  unpinned["target"]["jax"] = "0.12.0.1";
  EXPECT_EQ(unpinned, pinned);
}

// Answers every case with a crash, announcing a JAX release.
class ReleaseExecutor : public Executor {
 public:
  explicit ReleaseExecutor(std::string jax) : jax_(std::move(jax)) {}
  std::string name() const override { return "release"; }
  Profile profile() const override { return Profile::kMosaic; }
  Outcome run(const Case&) override {
    Outcome o;
    o.kind = OutcomeKind::kCrash;
    o.profile = Profile::kMosaic;
    o.reason = "a test executor";
    o.info["jax_version"] = jax_;
    return o;
  }

 private:
  std::string jax_;
};

std::size_t mismatches(const std::string& executor_jax, const Case& c) {
  std::vector<std::unique_ptr<Executor>> ex;
  ex.push_back(std::make_unique<ReleaseExecutor>(executor_jax));
  CaseCheck check(std::move(ex), DiagnosticLevel::kRule);
  return check.mismatches(c, nullptr).size() + check.full(c).mismatches.size();
}

TEST(FuzzJax, APinnedCaseIsNotComparedWithAnotherRelease) {
  Case c = generators::generate_case(1, 0);
  c.target.jax = JaxVersion::k0_12_0_1;
  c.target.jax_pinned = true;
  EXPECT_EQ(mismatches("0.11.2", c), 0u);    // a version mismatch: skipped
  EXPECT_EQ(mismatches("0.9.9", c), 0u);     // a release collfuzz does not model: skipped
  EXPECT_GT(mismatches("0.12.0.1", c), 0u);  // the same release: compared (the crash)
  c.target.jax_pinned = false;
  EXPECT_GT(mismatches("0.11.2", c), 0u);  // unpinned: judged by the executor's release
}

// Interpret mode runs a cluster's CTAs concurrently: which CTA's run-time error surfaces first is
// not fixed (found by the 0.12.0.1 campaign: run.barrier.wait_late named block 0 or block 1), so
// a jax-interpret disagreement on a multi-CTA cluster is confirmed by reruns, as one with Pallas
// threads is.
TEST(FuzzJax, InterpretModeDisagreementsOnAClusterAreConfirmed) {
  ConfirmPolicy policy;
  policy.repeats = 5;
  Case c;
  EXPECT_FALSE(needs_confirmation("jax-interpret", c, policy));
  c.mesh.cluster = {2};
  EXPECT_TRUE(needs_confirmation("jax-interpret", c, policy));
  EXPECT_FALSE(needs_confirmation("jax-lower", c, policy));
  c.mesh.cluster = {1, 1};
  c.mesh.num_threads = 2;
  EXPECT_TRUE(needs_confirmation("jax-interpret", c, policy));
}

}  // namespace
}  // namespace collfuzz::campaign
