// Interleaving-dependent run-time errors (oracles/reference/interleavings.h, issue 27): the
// reference predicts, besides its canonical schedule's error, the errors other schedules raise
// first; the diagnostic oracle accepts any of them, and only them; a stored expectation stays
// exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "oracles/oracles.h"
#include "oracles/reference/interpret_barrier.h"
#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

std::string thread(int block, int wg) {
  return "Warpgroup(device_id=0, cluster_id=0, block_id=" + std::to_string(block) +
         ", warpgroup_id=" + std::to_string(wg) + ")";
}

std::string dealloc_unobserved(int block) {
  return "When barrier 0 was deallocated, thread " + thread(block, 0) +
         " had only observed barrier up to phase 0, but barrier completed up to phase 1.";
}

std::string first_wait_late(int block, int phase) {
  return "Thread " + thread(block, 1) + " is waiting at barrier 0 for the first time, but " +
         "barrier is already at phase " + std::to_string(phase) +
         ". Any thread that participates in the barrier must do so in all phases.";
}

// Copy, wait, copy on a Barrier(num_arrivals=1) in every CTA of a cluster of `ctas` (one Pallas
// thread each): every CTA leaves its barrier one phase ahead of what its thread observed, and
// JAX 0.11.2 raises dealloc_unobserved on whichever CTA deallocates first.
json copy_wait_copy(int ctas) {
  json mesh = json::object();
  if (ctas > 1) mesh = {{"cluster", {ctas}}, {"cluster_names", {"x"}}};
  return make_case(mesh, {smem("dst", {8, 16}), barrier("bar")}, {copy(), wait(), copy()}, {8, 16},
                   "float32", "sm_90a", "lane", "interpret");
}

// corpus-jax-probes/races/first_wait_late_thread_race.json: thread 0 copies and waits 3 times,
// thread 1 only waits, on one barrier; nothing orders thread 1's first wait.
json first_wait_late_race(int ctas) {
  json mesh = {{"num_threads", 2}, {"thread_name", "wg"}};
  if (ctas > 1) {
    mesh["cluster"] = {ctas};
    mesh["cluster_names"] = {"x"};
  }
  json loop = {{"op", "loop"},
               {"trip_count", 3},
               {"body", {when({{"axis", "wg"}, {"eq", 0}}, json::array({copy()})), wait()}}};
  json c = make_case(mesh, {smem("dst", {8, 16}), barrier("bar")}, json::array({loop}), {8, 16},
                     "float32", "sm_90a", "lane", "interpret");
  c["program"][0]["collective_axes"] = {"wg"};  // one barrier for both threads
  return c;
}

// The prediction with the other interleavings' errors (compare() adds them when it needs them).
Outcome explored(const json& j, Profile profile = Profile::kInterpret) {
  const Case c = case_from_json(j);
  Outcome o = predict(c, profile).outcome;
  add_interleaving_alternatives(c, o);
  return o;
}

std::vector<std::string> messages(const Diagnostic& d) {
  std::vector<std::string> m;
  for (const auto& a : d.alternatives) m.push_back(a.message);
  return m;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Interleavings, EveryCtaThatBreaksTheInvariantMayBeNamed) {
  const Outcome o = explored(copy_wait_copy(4));
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->rule, "run.barrier.dealloc_unobserved");
  // The canonical schedule's CTA 0, as before (explain, repro and the corpus show it).
  EXPECT_EQ(o.diagnostic->message, dealloc_unobserved(0));
  // JAX named block 2 in 3 of 3 runs of the campaign's case (docs/jax-divergences.md).
  EXPECT_EQ(messages(*o.diagnostic),
            (std::vector<std::string>{dealloc_unobserved(1), dealloc_unobserved(2),
                                      dealloc_unobserved(3)}));
  for (const auto& a : o.diagnostic->alternatives) {
    EXPECT_EQ(a.rule, "run.barrier.dealloc_unobserved");
    EXPECT_EQ(a.exception, "ValueError");
  }
}

TEST(Interleavings, OneThreadOneCtaHasNoAlternative) {
  const Outcome o = explored(copy_wait_copy(1));
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->message, dealloc_unobserved(0));
  EXPECT_TRUE(o.diagnostic->alternatives.empty());
}

TEST(Interleavings, NoAlternativesForTheCompilerOrAnErrorBeforeTheRun) {
  // The compiler's profile has no run-time barrier checks; a trace-time error has one message.
  const Outcome mosaic = explored(copy_wait_copy(4), Profile::kMosaic);
  ASSERT_EQ(mosaic.kind, OutcomeKind::kCompleted);
  json bad = copy_wait_copy(4);
  bad["program"][0]["allocs"][0]["dtype"] = "float16";  // a copy between dtypes: trace time
  const Outcome o = explored(bad);
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_NE(o.diagnostic->stage, "run");
  EXPECT_TRUE(o.diagnostic->alternatives.empty());
}

TEST(Interleavings, AThreadThatJoinsLateMayJoinAtAnyPhaseItCanReach) {
  const Outcome o = explored(first_wait_late_race(2));
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->rule, "run.barrier.first_wait_late");
  // The canonical schedule runs thread 0 to its end first: thread 1 comes at phase 3.
  EXPECT_EQ(o.diagnostic->message, first_wait_late(0, 3));
  const auto m = messages(*o.diagnostic);
  // Thread 1 of either CTA, at phase 2 (thread 0 preempted after its second copy) or 3; the
  // campaign saw block 1 at phase 3 and block 0 at phase 2.
  EXPECT_TRUE(has(m, first_wait_late(0, 2)));
  EXPECT_TRUE(has(m, first_wait_late(1, 2)));
  EXPECT_TRUE(has(m, first_wait_late(1, 3)));
  // Never thread 0 (it waits from phase 0 on), never phase 1 (a first wait then is in time),
  // never a CTA outside the cluster.
  for (const std::string& s : m) {
    EXPECT_EQ(s.find(thread(0, 0)), std::string::npos) << s;
    EXPECT_EQ(s.find(thread(1, 0)), std::string::npos) << s;
    EXPECT_EQ(s.find("already at phase 1."), std::string::npos) << s;
    EXPECT_EQ(s.find("block_id=2"), std::string::npos) << s;
  }
}

Outcome completed_by_jax() {
  Outcome o;
  o.kind = OutcomeKind::kCompleted;
  o.profile = Profile::kInterpret;
  o.executor = "jax-interpret";
  return o;
}

TEST(Interleavings, ASchedulePerCtaThatRaisesNothingLetsTheKernelComplete) {
  // Thread 1's first wait comes before thread 0's first copy in some schedule: then both keep up
  // and nothing is raised. JAX 0.11.2 completed the campaign's case (seed 7, 2026-12-04) 5 of 5
  // times and its script, so the oracle accepts a completed run, and compares no bytes.
  const Outcome o = explored(first_wait_late_race(2));
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_TRUE(o.diagnostic->may_complete);
  const Case c = case_from_json(first_wait_late_race(2));
  const Outcome expected = predict(c, Profile::kInterpret).outcome;
  EXPECT_FALSE(expected.diagnostic->may_complete);  // predict() leaves it to compare()
  const Verdict v = compare(c, expected, completed_by_jax());
  EXPECT_TRUE(v.mismatches.empty()) << v.mismatches.front().detail;
  EXPECT_GT(v.compared, 0);
  // Copy, wait, copy raises dealloc_unobserved under every schedule: a completion is a finding.
  const Outcome always = explored(copy_wait_copy(4));
  EXPECT_FALSE(always.diagnostic->may_complete);
  const Case c2 = case_from_json(copy_wait_copy(4));
  const Verdict v2 = compare(c2, predict(c2, Profile::kInterpret).outcome, completed_by_jax());
  ASSERT_EQ(v2.mismatches.size(), 1u);
  EXPECT_EQ(v2.mismatches[0].signature,
            "diagnostic:accepted_not_rejected:run.barrier.dealloc_unobserved:jax-interpret");
}

TEST(Interleavings, AResumedWaitPassesHoweverFarThePhaseMoved) {
  // JAX checks a wait's invariants on entry; a sleeping waiter wakes and passes.
  ref::InterpretBarrier b(1);
  bool passed = false;
  std::int64_t phase = 0;
  EXPECT_FALSE(b.wait("t", passed, phase));  // t comes at phase 0 and sleeps
  EXPECT_FALSE(passed);
  bool completed = false;
  EXPECT_FALSE(b.arrive(completed));
  EXPECT_FALSE(b.wait("u", passed, phase));  // u observes phase 0 at once
  EXPECT_TRUE(passed);
  EXPECT_FALSE(b.arrive(completed));
  ASSERT_EQ(b.phase(), 2);
  // A thread that comes to its first wait now is late ...
  const auto late = b.wait("w", passed, phase);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->kind, ref::InterpretBarrier::Violation::Kind::kFirstWaitLate);
  // ... but t, which came at phase 0 and slept, passes, having observed phase 0 only,
  EXPECT_FALSE(b.wait("t", passed, phase, /*resumed=*/true));
  EXPECT_TRUE(passed);
  EXPECT_EQ(b.observed("t"), 1);
  // and its next wait finds phase 1 complete.
  EXPECT_FALSE(b.wait("t", passed, phase));
  EXPECT_TRUE(passed);
  EXPECT_EQ(b.observed("t"), 2);
}

Outcome rejected(const std::string& rule, const std::string& message) {
  Outcome o;
  o.kind = OutcomeKind::kRejected;
  o.profile = Profile::kInterpret;
  o.diagnostic = Diagnostic{"run", "ValueError", message, rule, ""};
  return o;
}

// What the JAX executor reports: no rule id, another process's barrier id.
Outcome from_jax(const std::string& message) {
  Outcome o = rejected("", message);
  o.executor = "jax-interpret";
  const std::string zero = "barrier 0 ";
  const auto at = o.diagnostic->message.find(zero);
  if (at != std::string::npos) o.diagnostic->message.replace(at, zero.size(), "barrier 1403343 ");
  return o;
}

TEST(Interleavings, TheOracleAcceptsEveryMemberAndNothingElse) {
  const Case c = case_from_json(copy_wait_copy(4));
  // predict() leaves the alternatives out (they cost executions); compare() adds them when the
  // executor's error is not the canonical one.
  const Outcome expected = predict(c, Profile::kInterpret).outcome;
  ASSERT_EQ(expected.executor, "reference");
  ASSERT_TRUE(expected.diagnostic->alternatives.empty());
  for (int block = 0; block < 4; ++block) {
    const Verdict v = compare(c, expected, from_jax(dealloc_unobserved(block)));
    EXPECT_TRUE(v.mismatches.empty()) << block << ": " << v.mismatches.front().detail;
  }
  // A CTA the cluster does not have, and a phase no schedule reaches: message mismatches.
  for (const std::string& wrong :
       {dealloc_unobserved(4),
        "When barrier 0 was deallocated, thread " + thread(1, 0) +
            " had only observed barrier up to phase 1, but barrier completed up to phase 2."}) {
    const Verdict v = compare(c, expected, from_jax(wrong));
    ASSERT_EQ(v.mismatches.size(), 1u) << wrong;
    EXPECT_EQ(v.mismatches[0].signature,
              "diagnostic:message:run.barrier.dealloc_unobserved:" + v.executor);
    EXPECT_NE(v.mismatches[0].detail.find("other interleavings"), std::string::npos);
  }
}

TEST(Interleavings, TheOracleAcceptsAnotherRuleOnlyWhenListed) {
  Outcome expected = rejected("run.barrier.first_wait_late", first_wait_late(0, 3));
  const std::string wait_late =
      "Thread " + thread(0, 1) +
      " is awaiting phase 2, but barrier is already at phase 3, which violates the invariant " +
      "that threads must observe each barrier completion before any arrivals in the next phase.";
  const Case c = case_from_json(first_wait_late_race(1));
  EXPECT_EQ(compare(c, expected, from_jax(wait_late)).mismatches.size(), 1u);
  expected.diagnostic->alternatives.push_back(
      DiagnosticAlternative{"run.barrier.wait_late", "ValueError", wait_late, ""});
  EXPECT_TRUE(compare(c, expected, from_jax(wait_late)).mismatches.empty());
  // At the rule level too; and another exception class is still a mismatch.
  EXPECT_TRUE(compare(c, expected, from_jax(wait_late), DiagnosticLevel::kRule).mismatches.empty());
  Outcome other = from_jax(wait_late);
  other.diagnostic->exception = "RuntimeError";
  EXPECT_FALSE(compare(c, expected, other).mismatches.empty());
}

TEST(Interleavings, AStoredExpectationStaysExact) {
  // replay compares the stored outcome (expected) with the prediction (actual): the stored one
  // lists no alternatives, so another member of the prediction's set is a mismatch ...
  const Case c = case_from_json(copy_wait_copy(4));
  const Outcome stored = rejected("run.barrier.dealloc_unobserved", dealloc_unobserved(2));
  const Outcome predicted = predict(c, Profile::kInterpret).outcome;
  EXPECT_EQ(compare(c, stored, predicted).mismatches.size(), 1u);
  // ... unless the case lists the canonical message among its own alternatives.
  Outcome racy = stored;
  racy.diagnostic->alternatives.push_back(DiagnosticAlternative{
      "run.barrier.dealloc_unobserved", "ValueError", dealloc_unobserved(0), ""});
  EXPECT_TRUE(compare(c, racy, predicted).mismatches.empty());
}

TEST(Interleavings, AlternativesRoundTripThroughJsonAndBadOnesNameTheirPath) {
  const Case c = case_from_json(copy_wait_copy(4));
  const Outcome o = explored(copy_wait_copy(4));
  const json j = outcome_to_json(o);
  ASSERT_EQ(j["diagnostic"]["alternatives"].size(), 3u);
  const Outcome back = outcome_from_json(j, c, "$");
  EXPECT_EQ(back.diagnostic->alternatives, o.diagnostic->alternatives);
  json bad = j;
  bad["diagnostic"]["alternatives"][1].erase("message");
  try {
    (void)outcome_from_json(bad, c, "$");
    FAIL() << "accepted an alternative without a message";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("$.diagnostic.alternatives[1]"), std::string::npos)
        << e.what();
  }
  bad = j;
  bad["diagnostic"]["alternatives"][0]["when"] = 1;
  EXPECT_THROW((void)outcome_from_json(bad, c, "$"), InputError);
}

TEST(Interleavings, MayCompleteRoundTripsThroughJson) {
  Outcome o = rejected("run.barrier.first_wait_late", first_wait_late(0, 3));
  o.diagnostic->may_complete = true;
  const Case c = case_from_json(first_wait_late_race(1));
  const Outcome back = outcome_from_json(outcome_to_json(o), c, "$");
  ASSERT_TRUE(back.diagnostic);
  EXPECT_TRUE(back.diagnostic->may_complete);
  o.diagnostic->may_complete = false;
  EXPECT_FALSE(outcome_to_json(o)["diagnostic"].contains("may_complete"));
}

// A DSMEM write with no ClusterBarrier: interpret mode refuses the cluster_ref in whichever CTA
// gets there first, each naming the index it computed; the CTAs are not interchangeable (renaming
// the first CTA's message would keep its index), so every thread runs together.
TEST(Interleavings, EachCtasClusterRefIndexIsAnAlternativeWithoutAClusterBarrier) {
  const json j = json::parse(R"({"format": 1, "name": "dsmem_write_unsynced",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a", "semantics": "lane", "profile": "interpret"},
    "inputs": [{"name": "x", "shape": [2, 256], "dtype": "float32"}],
    "outputs": [{"name": "out", "shape": [2, 256], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [{"name": "smem", "kind": "smem", "shape": [256], "dtype": "float32"}],
      "body": [{"op": "vector_store", "dst": {"alloc": "smem", "cluster": {"x": {"axis": "x", "mul": -1, "add": 1}}},
                "value": {"load": {"input": "x", "index": [{"axis": "x"}]}}}]}]})");
  const Outcome o = explored(j);
  ASSERT_TRUE(o.diagnostic);
  const auto msg = [](int k) {
    return "Unsupported transform: ClusterRefTransform(dims=('x',), idxs=(Array(" +
           std::to_string(k) + ", dtype=int32),))";
  };
  EXPECT_EQ(o.diagnostic->message, msg(1));  // CTA 0 first in the canonical schedule
  EXPECT_TRUE(has(messages(*o.diagnostic), msg(0)))
      << ::testing::PrintToString(messages(*o.diagnostic));
}

}  // namespace
}  // namespace collfuzz::testing
