// Root-cause groups (root_cause.h) and undefined behaviour as a finding (undefined_behaviour.h).
#include <gtest/gtest.h>

#include "harness/campaign/root_cause.h"
#include "harness/campaign/undefined_behaviour.h"

namespace collfuzz::campaign {
namespace {

Mismatch mismatch(const std::string& oracle, const std::string& kind, const std::string& what) {
  return Mismatch{oracle, kind, what, "", make_signature(oracle, kind, what, "sim")};
}

Outcome rejected_with(const std::string& rule) {
  Outcome o;
  o.kind = OutcomeKind::kRejected;
  o.diagnostic = Diagnostic{"lower", "ValueError", "some message", rule, ""};
  return o;
}

TEST(RootCause, TheRuleTheExecutorFiresIsTheGroup) {
  // Expected rule a, the executor fired b: the group is b's check, whatever a was.
  const Outcome actual = rejected_with("launch_context.minor_dim_16b");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rule", "lower.copy.a")}, actual, "sim"),
            "diagnostic:check:launch_context.minor_dim_16b:sim");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rule", "lower.copy.b")}, actual, "sim"),
            "diagnostic:check:launch_context.minor_dim_16b:sim");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rejected_not_accepted", "x")}, actual, "sim"),
            "diagnostic:check:launch_context.minor_dim_16b:sim");
}

TEST(RootCause, AMissedRuleIsTheReferencesRule) {
  Outcome accepted;
  accepted.kind = OutcomeKind::kCompleted;
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "accepted_not_rejected", "lower.scoped.y")},
                             accepted, "jax-interpret"),
            "diagnostic:check:lower.scoped.y:jax-interpret");
}

TEST(RootCause, TheMostUpstreamMismatchWinsAndCopyKindsAreOneFamily) {
  Outcome done;
  done.kind = OutcomeKind::kCompleted;
  const std::vector<Mismatch> ms = {mismatch("memory", "data", "copy_multicast"),
                                    mismatch("bytes", "hang", "kernel"),
                                    mismatch("bytes", "final_state", "copy_multicast"),
                                    mismatch("bytes", "over_completion", "copy_multicast")};
  EXPECT_EQ(root_cause_group(ms, done, "sim"), "bytes:tx_bytes:copy:sim");
  EXPECT_EQ(root_cause_group({mismatch("bytes", "would_hang", "copy_partitioned")}, done, "sim"),
            "bytes:tx_bytes:copy:sim");
  EXPECT_EQ(root_cause_group({mismatch("bytes", "count", "barrier_arrive"),
                              mismatch("bytes", "arrivals", "barrier_arrive")},
                             done, "sim"),
            "bytes:count:barrier_arrive:sim");
  EXPECT_EQ(root_cause_group({}, done, "sim"), "");
}

TEST(UndefinedBehaviour, IsAFindingOnlyWhereTheReferencePredictsADefinedOutcome) {
  Outcome ub;
  ub.kind = OutcomeKind::kUnavailable;
  ub.reason =
      "undefined behaviour the simulator does not model: a multicast to CTA 2 of a cluster of 2";
  Outcome completed;
  completed.kind = OutcomeKind::kCompleted;
  const auto m = undefined_behaviour_mismatch(completed, ub, "sim");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->signature, "undefined:behaviour:multicast_outside_cluster:sim");
  Outcome unavailable;
  unavailable.kind = OutcomeKind::kUnavailable;
  EXPECT_FALSE(undefined_behaviour_mismatch(unavailable, ub, "sim"));
  Outcome other = ub;
  other.reason = "the simulator does not model tcgen05";
  EXPECT_FALSE(undefined_behaviour_mismatch(completed, other, "sim"));
}

TEST(UndefinedBehaviour, ReasonClassesDropTheNumbers) {
  EXPECT_EQ(unavailable_reason_class("a multicast to CTA 12 of a cluster of 2"),
            "a multicast to CTA N of a cluster of N");
  EXPECT_EQ(unavailable_reason_class(std::string(500, 'x')).size(), 160u);
}

}  // namespace
}  // namespace collfuzz::campaign
