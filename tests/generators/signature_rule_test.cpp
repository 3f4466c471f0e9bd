// A signature never takes a rule id from an empty message (issue 11: an unexplained empty
// AssertionError of interpret mode was signed `run.cluster_barrier.thread_axis`, a rule of a
// kernel with no cluster barrier).
#include <gtest/gtest.h>

#include "oracles/oracles.h"

namespace collfuzz {
namespace {

TEST(SignatureRule, AnEmptyMessageBorrowsNoRule) {
  Outcome expected;
  expected.kind = OutcomeKind::kCompleted;
  expected.profile = Profile::kInterpret;
  Outcome actual;
  actual.kind = OutcomeKind::kRejected;
  actual.profile = Profile::kInterpret;
  actual.diagnostic = Diagnostic{"run", "AssertionError", "", "", "$.program[1].body[0]"};
  Verdict v;
  v.executor = "jax-interpret";
  diagnostic_oracle(expected, actual, DiagnosticLevel::kMessage, v);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0].signature, "diagnostic:rejected_not_accepted:unknown:jax-interpret");
}

TEST(SignatureRule, AnEmptyMessageStillMatchesTheExpectedRuleWithNoText) {
  // run.cluster_barrier.thread_axis is a bare assert: when the reference predicts it, JAX's
  // empty AssertionError agrees with it.
  Outcome expected;
  expected.kind = OutcomeKind::kRejected;
  expected.profile = Profile::kInterpret;
  expected.diagnostic =
      Diagnostic{"run", "AssertionError", "", "run.cluster_barrier.thread_axis", "$.program[0]"};
  Outcome actual = expected;
  actual.diagnostic->rule = "";
  Verdict v;
  v.executor = "jax-interpret";
  diagnostic_oracle(expected, actual, DiagnosticLevel::kMessage, v);
  EXPECT_TRUE(v.mismatches.empty());
}

}  // namespace
}  // namespace collfuzz
