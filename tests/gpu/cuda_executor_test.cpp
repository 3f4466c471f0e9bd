// The `cuda` executor's process handling, with a fake worker that hangs, crashes, loses its
// CUDA context or breaks the protocol on request: the culprit is isolated and reported, the
// worker is restarted, and every other case still runs. Then the real worker, emulated (the
// whole path from the harness to the device tables and back) and on this GPU-less machine.
#include "gpu/cuda_executor.h"

#include <gtest/gtest.h>

#include "harness/core/outcome_json.h"
#include "harness/executors/executor.h"
#include "oracles/oracles.h"
#include "tests/gpu/gpu_test_util.h"

namespace collfuzz::gpu {
namespace {

using gputest::multicast_case;

CudaExecutorOptions fake(std::vector<std::string> extra = {}) {
  CudaExecutorOptions o;
  o.worker_argv = {COLLFUZZ_FAKE_WORKER};
  for (auto& e : extra) o.worker_argv.push_back(e);
  o.request_timeout_s = 1.5;
  o.per_case_timeout_s = 0;
  o.startup_timeout_s = 10;
  o.require_device_node = false;
  return o;
}

std::vector<Case> named(const std::vector<std::string>& names) {
  std::vector<Case> out;
  for (const auto& n : names) out.push_back(multicast_case(2, 64, 64, R"("x")", n));
  return out;
}

TEST(CudaExecutor, ABatchIsOneRequest) {
  CudaExecutor ex(fake());
  const auto out = ex.run_batch(named({"a", "b", "c"}));
  ASSERT_EQ(out.size(), 3u);
  for (const Outcome& o : out) {
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
    EXPECT_EQ(o.info.at("request_cases"), "3");
    EXPECT_EQ(o.executor, "cuda");
  }
  EXPECT_EQ(out[0].info.at("pid"), out[2].info.at("pid"));
  EXPECT_EQ(ex.run(named({"d"})[0]).info.at("pid"), out[0].info.at("pid"));  // persistent
  EXPECT_EQ(ex.restarts(), 0);
  EXPECT_EQ(ex.hello_info().at("fake"), "1");
}

TEST(CudaExecutor, AHangIsATimeoutForItsCaseOnly) {
  CudaExecutor ex(fake());
  const auto out = ex.run_batch(named({"a", "hang", "b"}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, OutcomeKind::kCompleted);
  ASSERT_EQ(out[1].kind, OutcomeKind::kTimeout);
  EXPECT_NE(out[1].reason.find("no answer within"), std::string::npos) << out[1].reason;
  EXPECT_EQ(out[2].kind, OutcomeKind::kCompleted);
  EXPECT_EQ(out[2].info.at("request_cases"), "1");  // rerun alone
  EXPECT_GE(ex.restarts(), 2);
  EXPECT_EQ(ex.run(named({"after"})[0]).kind, OutcomeKind::kCompleted);  // the run goes on
}

TEST(CudaExecutor, ACrashIsACrashForItsCaseOnly) {
  CudaExecutor ex(fake());
  const auto out = ex.run_batch(named({"a", "crash", "b"}));
  EXPECT_EQ(out[0].kind, OutcomeKind::kCompleted);
  ASSERT_EQ(out[1].kind, OutcomeKind::kCrash);
  EXPECT_NE(out[1].reason.find("exited"), std::string::npos) << out[1].reason;
  EXPECT_EQ(out[2].kind, OutcomeKind::kCompleted);
}

TEST(CudaExecutor, ALostContextRestartsTheWorkerAndIsolatesTheCase) {
  CudaExecutor ex(fake());
  const auto out = ex.run_batch(named({"a", "sticky", "b"}));
  EXPECT_EQ(out[0].kind, OutcomeKind::kCompleted) << out[0].reason;
  ASSERT_EQ(out[1].kind, OutcomeKind::kCrash);
  EXPECT_EQ(out[1].info.at("cuda_context_lost"), "1");
  EXPECT_EQ(out[2].kind, OutcomeKind::kCompleted) << out[2].reason;
  EXPECT_NE(out[0].info.at("pid"), out[2].info.at("pid"));
  EXPECT_GE(ex.restarts(), 2);
}

TEST(CudaExecutor, AProtocolErrorIsACrash) {
  CudaExecutor ex(fake());
  const auto out = ex.run_batch(named({"garbage"}));
  ASSERT_EQ(out[0].kind, OutcomeKind::kCrash);
  EXPECT_NE(out[0].reason.find("not JSON"), std::string::npos) << out[0].reason;
}

TEST(CudaExecutor, AnUnavailableWorkerMakesEveryCaseUnavailable) {
  CudaExecutor ex(fake({"--unavailable"}));
  const auto out = ex.run_batch(named({"a", "b"}));
  for (const Outcome& o : out) {
    EXPECT_EQ(o.kind, OutcomeKind::kUnavailable);
    EXPECT_EQ(o.reason, "fake: no device");
  }
  EXPECT_EQ(ex.unavailable_reason(), "fake: no device");
}

TEST(CudaExecutor, SaysUnavailableBeforeStartingAnything) {
  CudaExecutorOptions o = fake();
  o.worker_argv = {"/nonexistent/collfuzz-cuda-worker"};
  CudaExecutor missing(o);
  EXPECT_NE(missing.unavailable_reason().find("does not exist"), std::string::npos);
  EXPECT_EQ(missing.run(named({"a"})[0]).kind, OutcomeKind::kUnavailable);

  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  CudaExecutorOptions real = fake();
  real.worker_argv = {COLLFUZZ_WORKER};
  real.require_device_node = true;
  CudaExecutor no_gpu(real);
  EXPECT_EQ(no_gpu.unavailable_reason(), "no NVIDIA GPU on this machine (no /dev/nvidia0)");
}

TEST(CudaExecutor, TheRegistryKnowsCuda) {
  bool listed = false;
  for (const auto& e : executor_registry()) listed = listed || e.name == "cuda";
  EXPECT_TRUE(listed);
  EXPECT_EQ(make_executor("cuda", ExecutorOptions{})->name(), "cuda");
  EXPECT_EQ(parse_executor_list("reference,sim,cuda").size(), 3u);
}

TEST(CudaExecutor, TheRealWorkerWithoutAGpuSaysWhy) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  CudaExecutorOptions o = fake();
  o.worker_argv = {COLLFUZZ_WORKER};
  CudaExecutor ex(o);
  const Outcome out = ex.run(multicast_case(2, 64, 64));
  ASSERT_EQ(out.kind, OutcomeKind::kUnavailable) << out.reason;
#ifdef COLLFUZZ_HAVE_CUDA
  EXPECT_NE(out.reason.find("no CUDA device"), std::string::npos) << out.reason;
#else
  EXPECT_NE(out.reason.find("without CUDA"), std::string::npos) << out.reason;
#endif
}

TEST(CudaExecutor, TheRealWorkerEmulatedAgreesWithTheReference) {
  CudaExecutorOptions o = fake();
  o.worker_argv = {COLLFUZZ_WORKER, "--emulate"};
  o.request_timeout_s = 60;
  CudaExecutor ex(o);
  const std::vector<std::string> names = {
      "mode.multicast__cluster4_rows", "mode.multicast__cluster2x2_ab_a", "mode.plain__two_phases",
      "deadlock.leader_tracked__size1_axis"};
  std::vector<Case> cases;
  std::vector<Outcome> expected;
  for (const auto& n : names) {
    nlohmann::json expect;
    cases.push_back(load_case_file(gputest::corpus_dir() / (n + ".json"), &expect));
    expected.push_back(outcome_from_json(expect, cases.back(), n));
  }
  const auto out = ex.run_batch(cases);
  ASSERT_EQ(out.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(out[i].accepted()) << names[i] << ": " << out[i].reason;
    EXPECT_EQ(out[i].info.at("device"), "CPU emulation of the device tables (not a GPU)");
    const Verdict v = compare(cases[i], expected[i], out[i]);
    EXPECT_TRUE(v.mismatches.empty())
        << names[i] << ": " << (v.mismatches.empty() ? "" : v.mismatches[0].detail);
  }
  EXPECT_EQ(out[3].kind, OutcomeKind::kTimeout);
}

}  // namespace
}  // namespace collfuzz::gpu
