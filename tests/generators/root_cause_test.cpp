// Root-cause groups (root_cause.h) and undefined behaviour as a finding (undefined_behaviour.h).
#include <gtest/gtest.h>

#include "harness/campaign/case_check.h"
#include "harness/campaign/root_cause.h"
#include "harness/campaign/undefined_behaviour.h"
#include "harness/core/case_json.h"
#include "harness/executors/executor.h"
#include "harness/runner/case_runner.h"
#include "oracles/oracles.h"

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
  // Expected rule a, the executor fired b: the group is b's checks (its family and spec
  // section), whatever a was.
  const Outcome actual = rejected_with("launch_context.minor_dim_16b");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rule", "lower.copy.a")}, actual, "sim"),
            "diagnostic:check:launch_context@3.3:sim");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rule", "lower.copy.b")}, actual, "sim"),
            "diagnostic:check:launch_context@3.3:sim");
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "rejected_not_accepted", "x")}, actual, "sim"),
            "diagnostic:check:launch_context@3.3:sim");
}

TEST(RootCause, ChecksOfOneFamilyInOneSectionAreOneGroup) {
  // A wrong chunk shape fails LaunchContext's box and minor-dim checks (both section 3.3): one
  // group. Its multicast split (section 3.5), and a lowering rule of section 3.3 (another
  // family), are groups of their own.
  const auto group = [](const std::string& rule) {
    return root_cause_group({mismatch("diagnostic", "rejected_not_accepted", "x")},
                            rejected_with(rule), "sim");
  };
  EXPECT_EQ(group("launch_context.box_max_256"), group("launch_context.minor_dim_16b"));
  EXPECT_NE(group("launch_context.multicast.no_divisible_dim"),
            group("launch_context.minor_dim_16b"));
  EXPECT_EQ(group("launch_context.multicast.no_divisible_dim"),
            "diagnostic:check:launch_context@3.5:sim");
  EXPECT_NE(group("lower.copy.unknown_cluster_axis"), group("launch_context.minor_dim_16b"));
  // A rule id that is no rule of rules.def is kept as it is.
  EXPECT_EQ(group("no.such.rule"), "diagnostic:check:no.such.rule:sim");
}

TEST(RootCause, AMissedRuleIsTheReferencesRule) {
  Outcome accepted;
  accepted.kind = OutcomeKind::kCompleted;
  EXPECT_EQ(root_cause_group({mismatch("diagnostic", "accepted_not_rejected",
                                       "interpret.scoped.thread_axis_required")},
                             accepted, "jax-interpret"),
            "diagnostic:check:interpret@2.2:jax-interpret");
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

// The group of `ms` on the simulator, whose run ended as `kind`.
std::string sim_group(const std::vector<Mismatch>& ms, OutcomeKind kind) {
  Outcome actual;
  actual.kind = kind;
  return root_cause_group(ms, actual, "sim");
}

TEST(RootCause, DataIsOneQuantityInSmemAndInOutputs) {
  // A wrong SMEM datum shows in the buffer (the simulator) or in the output stored from it (the
  // JAX executors see only outputs): one group.
  constexpr auto kDone = OutcomeKind::kCompleted;
  EXPECT_EQ(sim_group({mismatch("memory", "output", "copy_smem_to_gmem")}, kDone),
            "memory:data:copy:sim");
  EXPECT_EQ(sim_group({mismatch("memory", "data", "copy_partitioned")}, kDone),
            "memory:data:copy:sim");
  // Bytes come before the data, wherever it is seen.
  EXPECT_EQ(sim_group({mismatch("memory", "output", "copy_smem_to_gmem"),
                       mismatch("bytes", "byte_count", "copy_multicast")},
                      kDone),
            "bytes:tx_bytes:copy:sim");
}

TEST(RootCause, UndefinedBehaviourIsTheQuantityItCorruptsOutOfRange) {
  // A wrong multicast mask delivers bytes to the wrong CTAs, or past the cluster; a count one
  // short is a wrong count, or 0: one group each way.
  constexpr auto kUb = OutcomeKind::kUndefined;
  EXPECT_EQ(sim_group({mismatch("undefined", "behaviour", "multicast_outside_cluster")}, kUb),
            "bytes:tx_bytes:copy:sim");
  EXPECT_EQ(sim_group({mismatch("undefined", "behaviour", "mbarrier_init_count")}, kUb),
            "bytes:count:barrier_arrive:sim");
  EXPECT_EQ(sim_group({mismatch("undefined", "behaviour", "cluster_arrival_outside_cluster")}, kUb),
            "bytes:arrivals:barrier_arrive:sim");
  // Undefined behaviour of another code than the reference predicts stays its own signature.
  EXPECT_EQ(sim_group({mismatch("undefined", "other_code", "multicast_outside_cluster")}, kUb),
            "undefined:other_code:multicast_outside_cluster:sim");
}

Outcome undefined(UndefinedBehaviour code) {
  Outcome o;
  o.kind = OutcomeKind::kUndefined;
  o.undefined = UndefinedRecord{code, "$.program[0].body[0]", 0, "a multicast to CTA 2", {}};
  return o;
}

// The undefined-behaviour oracle's mismatch for `actual` against `expected`, as compare() makes it.
std::optional<std::string> ub_signature(const Outcome& expected, const Outcome& actual) {
  Verdict v;
  v.executor = "sim";
  v.ran = true;
  undefined_oracle(expected, actual, v);
  if (v.mismatches.empty()) return std::nullopt;
  return v.mismatches.front().signature;
}

TEST(UndefinedBehaviour, IsAFindingOnlyWhereTheReferencePredictsADefinedOutcome) {
  const Outcome ub = undefined(UndefinedBehaviour::kMulticastOutsideCluster);
  Outcome completed;
  completed.kind = OutcomeKind::kCompleted;
  const auto m = ub_signature(completed, ub);
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, "undefined:behaviour:multicast_outside_cluster:sim");
  Outcome unavailable;
  unavailable.kind = OutcomeKind::kUnavailable;
  EXPECT_FALSE(ub_signature(unavailable, ub));
  EXPECT_FALSE(ub_signature(ub, ub));  // the reference predicts it too
  Outcome other;  // an unavailable run is no undefined behaviour, whatever its reason says
  other.kind = OutcomeKind::kUnavailable;
  other.reason = "undefined behaviour the simulator does not model: a multicast to CTA 2";
  EXPECT_FALSE(ub_signature(completed, other));
}

// The corpus case of the default campaign's old false finding (seed 1, case 554).
Case repeated_axis_case() {
  return load_case_file(std::string(COLLFUZZ_SOURCE_DIR) +
                        "/corpus/run.multicast.outside_cluster__repeated_axis_cluster_of_2.json");
}

std::vector<std::unique_ptr<Executor>> sim_only() {
  std::vector<std::unique_ptr<Executor>> ex;
  ex.push_back(make_executor("sim", ExecutorOptions{}));
  return ex;
}

TEST(UndefinedBehaviour, TheCampaignDoesNotReportWhatTheReferencePredicts) {
  const Case c = repeated_axis_case();
  CaseCheck check(sim_only(), DiagnosticLevel::kMessage);
  EXPECT_TRUE(check.mismatches(c, nullptr, 554).empty());
  EXPECT_TRUE(check.take_unavailable().empty());  // compared, agreeing: not skipped
  EXPECT_EQ(check.take_runs()["sim"], 1);
  const CaseReportFull full = check.full(c);
  EXPECT_TRUE(full.mismatches.empty());
  ASSERT_EQ(full.executors.size(), 1u);
  EXPECT_TRUE(full.executors[0].verdict.agrees());
  EXPECT_GT(full.executors[0].verdict.compared, 0);
}

TEST(UndefinedBehaviour, TheSimulatorsUndefinedRunAgainstADefinedPredictionIsAFinding) {
  // A reference that predicted a defined outcome for the case (as it did before it knew the
  // rule): the simulator's undefined run is still the finding.
  const Case c = repeated_axis_case();
  Outcome actual = make_executor("sim", ExecutorOptions{})->run(c);
  actual.executor = "sim";
  ASSERT_EQ(actual.kind, OutcomeKind::kUndefined);
  Outcome defined;
  defined.kind = OutcomeKind::kCompleted;
  const Verdict v = compare(c, defined, actual);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0].signature, "undefined:behaviour:multicast_outside_cluster:sim");
  EXPECT_TRUE(v.ran);
}

TEST(UndefinedBehaviour, TheOracleComparesCodes) {
  const Case c = repeated_axis_case();
  const Outcome multicast = undefined(UndefinedBehaviour::kMulticastOutsideCluster);
  Outcome same = multicast;
  same.executor = "x";
  same.undefined->op = "$.program[0]";  // where is not compared, the code is
  Verdict v = compare(c, multicast, same);
  EXPECT_TRUE(v.agrees());
  EXPECT_EQ(v.compared, 1);
  Outcome other = undefined(UndefinedBehaviour::kClusterArrivalOutsideCluster);
  other.executor = "x";
  v = compare(c, multicast, other);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0].signature, "undefined:other_code:multicast_outside_cluster:x");
}

TEST(UndefinedBehaviour, ADefinedRunAgainstAPredictedOneIsNotCompared) {
  const Case c = repeated_axis_case();
  const Outcome predicted = undefined(UndefinedBehaviour::kMulticastOutsideCluster);
  for (OutcomeKind k : {OutcomeKind::kCompleted, OutcomeKind::kDeadlock, OutcomeKind::kTimeout}) {
    Outcome run;
    run.kind = k;
    run.executor = "cuda";
    const Verdict v = compare(c, predicted, run);
    EXPECT_FALSE(v.ran) << to_string(k);
    EXPECT_FALSE(v.agrees()) << to_string(k);  // never a pass
    EXPECT_TRUE(v.mismatches.empty()) << to_string(k);
    EXPECT_NE(v.reason.find("not compared"), std::string::npos) << v.reason;
  }
  // A diagnostic is compared: the executor rejected a case the compiler accepts.
  Outcome rejected;
  rejected.kind = OutcomeKind::kRejected;
  rejected.executor = "cuda";
  rejected.diagnostic = Diagnostic{"lower", "ValueError", "no", "", ""};
  const Verdict v = compare(c, predicted, rejected);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0].oracle, "diagnostic");
}

TEST(UndefinedBehaviour, ReplayCountsANotComparedRunAsSkipped) {
  CaseReport report;
  ExecutorResult r;
  r.executor = "cuda";
  r.verdict.executor = "cuda";
  r.verdict.ran = false;
  r.verdict.reason = "not compared: the reference predicts undefined behaviour";
  report.results.push_back(r);
  CheckCounts counts;
  counts.add(report);
  EXPECT_EQ(counts.passed(), 0);
  EXPECT_EQ(counts.skipped(), 1);
  EXPECT_TRUE(counts.nothing_compared());
}

TEST(UndefinedBehaviour, ReasonClassesDropTheNumbers) {
  EXPECT_EQ(unavailable_reason_class("a multicast to CTA 12 of a cluster of 2"),
            "a multicast to CTA N of a cluster of N");
  EXPECT_EQ(unavailable_reason_class(std::string(500, 'x')).size(), 160u);
}

}  // namespace
}  // namespace collfuzz::campaign
