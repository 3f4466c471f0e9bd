// The `sim` executor through the registry and the case runner, as `collfuzz run --executors
// reference,sim` uses it.
#include <gtest/gtest.h>

#include "harness/runner/case_runner.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

TEST(SimExecutor, IsRegisteredForProfileMosaic) {
  bool listed = false;
  for (const auto& e : executor_registry()) listed = listed || e.name == "sim";
  EXPECT_TRUE(listed);
  const auto ex = make_executor("sim", ExecutorOptions{});
  EXPECT_EQ(ex->name(), "sim");
  EXPECT_EQ(ex->profile(), Profile::kMosaic);
  EXPECT_TRUE(ex->unavailable_reason().empty());
}

TEST(SimExecutor, AgreesWithTheReferenceThroughTheRunner) {
  const Case c = simtest::make_case(R"({"cluster": [2], "cluster_names": ["x"]})", simtest::kLane,
                                    R"([{"name": "x", "shape": [128, 64], "dtype": "float32"}])",
                                    R"([{"op": "run_scoped", "allocs": [
                                         {"name": "dst", "kind": "smem", "shape": [128, 64], "dtype": "float32"},
                                         {"name": "bar", "kind": "barrier"}],
                                       "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                                                 "barrier": {"alloc": "bar"}, "collective_axes": ["x"]},
                                                {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
  CaseRunner runner({"sim"}, ExecutorOptions{}, DiagnosticLevel::kMessage);
  const CaseReport report = runner.run(c, nullptr, "inline");
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_TRUE(report.results[0].verdict.agrees());
  EXPECT_EQ(report.results[0].outcome.executor, "sim");
  EXPECT_EQ(report.results[0].outcome.kind, OutcomeKind::kCompleted);
}

TEST(SimExecutor, RejectsAsTheCompilerDoes) {
  const Case c = simtest::make_case("{}", simtest::kLane,
                                    R"([{"name": "x", "shape": [16], "dtype": "float32"}])",
                                    R"([{"op": "run_scoped", "allocs": [
                                         {"name": "dst", "kind": "smem", "shape": [16], "dtype": "float32"},
                                         {"name": "bar", "kind": "barrier"}],
                                       "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                                                 "barrier": {"alloc": "bar"}}]}])");
  CaseRunner runner({"sim"}, ExecutorOptions{}, DiagnosticLevel::kMessage);
  const CaseReport report = runner.run(c, nullptr, "inline");
  EXPECT_EQ(report.results[0].outcome.kind, OutcomeKind::kRejected);
  EXPECT_TRUE(report.results[0].verdict.agrees());
}

}  // namespace
}  // namespace collfuzz
