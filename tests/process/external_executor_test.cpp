// The external executor protocol's failures (issue 10), against a fake executor
// (tests/process/fake_executor.py): any line that breaks the protocol restarts the process and
// is the current case's failure, never the next case's; a missing hello costs --timeout, and
// after kMaxFailedStarts the executor is unavailable; an overlong line is refused in bounded
// memory; the process's group goes with it; its log is private and removed.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "harness/core/case.h"
#include "harness/executors/external_executor.h"

namespace collfuzz {
namespace {

const std::string kFake = std::string(COLLFUZZ_SOURCE_DIR) + "/tests/process/fake_executor.py";

// startup_timeout < 0: the same as the case timeout.
std::unique_ptr<ExternalExecutor> fake(const std::string& mode, double timeout = 30,
                                       const std::string& log_dir = "",
                                       double startup_timeout = -1) {
  ::setenv("FAKE_EXECUTOR_MODE", mode.c_str(), 1);
  return std::make_unique<ExternalExecutor>(
      "fake", Profile::kInterpret, std::vector<std::string>{kFake}, timeout,
      startup_timeout < 0 ? timeout : startup_timeout, log_dir);
}

Case any_case() {
  Case c;
  c.name = "c";
  return c;
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

bool eventually(const std::function<bool()>& done, double seconds = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// The stages each JAX mode can show (Executor::observes_stage): the campaign's health check
// counts the rules in an executor's reach from them. Building an executor starts no process.
TEST(ExternalExecutorStages, LowerStopsAfterLoweringAndIrNeitherCompilesNorLaunches) {
  ExecutorOptions o;
  o.repo_root = COLLFUZZ_SOURCE_DIR;
  const auto lower = make_executor("jax-lower", o);
  for (const char* stage :
       {"mesh", "trace", "estimate", "module", "lower", "verify", "dialect", "finalize"})
    EXPECT_TRUE(lower->observes_stage(stage)) << stage;
  for (const char* stage : {"compile", "launch", "run"})
    EXPECT_FALSE(lower->observes_stage(stage)) << stage;
  const auto ir = make_executor("jax-ir", o);
  EXPECT_TRUE(ir->observes_stage("lower"));
  EXPECT_TRUE(ir->observes_stage("run"));
  EXPECT_FALSE(ir->observes_stage("compile"));
  EXPECT_FALSE(ir->observes_stage("launch"));
  for (const char* name : {"jax-interpret", "sim"}) {
    const auto ex = make_executor(name, o);
    for (const char* stage : {"trace", "interpret", "compile", "launch", "run"})
      EXPECT_TRUE(ex->observes_stage(stage)) << name << " " << stage;
  }
}

TEST(ExternalExecutorProtocol, AnswersAreMatchedToTheirCases) {
  auto ex = fake("ok");
  const Outcome a = ex->run(any_case());
  const Outcome b = ex->run(any_case());
  EXPECT_EQ(a.kind, OutcomeKind::kUnavailable);
  EXPECT_EQ(a.reason, "fake answer 1");
  EXPECT_EQ(b.reason, "fake answer 2");
  EXPECT_EQ(ex->restarts(), 0);
}

// Before the fix, a garbage line gave a crash but no restart, and the stale answer to case 1
// was then read as case 2's (a protocol error blamed on a case that never ran).
TEST(ExternalExecutorProtocol, GarbageLineRestartsAndIsTheCurrentCasesFailure) {
  auto ex = fake("garbage");
  const Outcome first = ex->run(any_case());
  EXPECT_EQ(first.kind, OutcomeKind::kCrash);
  EXPECT_NE(first.reason.find("protocol error"), std::string::npos) << first.reason;
  EXPECT_EQ(ex->restarts(), 1);
  const Outcome second = ex->run(any_case());
  EXPECT_EQ(second.kind, OutcomeKind::kUnavailable) << second.reason;
  // Request 2 went to a fresh process (its hello read anew), which answered it.
  EXPECT_EQ(second.reason, "fake answer 2");
}

TEST(ExternalExecutorProtocol, WrongIdRestarts) {
  auto ex = fake("wrong-id");
  EXPECT_EQ(ex->run(any_case()).kind, OutcomeKind::kCrash);
  EXPECT_EQ(ex->restarts(), 1);
  EXPECT_EQ(ex->run(any_case()).reason, "fake answer 2");
}

TEST(ExternalExecutorProtocol, TimeoutRestarts) {
  // A 1 s case timeout, but 30 s to start: the restarted Python must say hello even on a loaded
  // machine (with a 1 s start-up it failed under a load of 9 on 2 cores).
  auto ex = fake("slow", 1, "", 30);
  const Outcome first = ex->run(any_case());
  EXPECT_EQ(first.kind, OutcomeKind::kTimeout);
  EXPECT_EQ(ex->run(any_case()).reason, "fake answer 2");
}

// Before the fix, a missing hello waited max(120 s, --timeout) on every case.
TEST(ExternalExecutorProtocol, MissingHelloFollowsTimeoutThenTheExecutorIsUnavailable) {
  auto ex = fake("no-hello", 1);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ExternalExecutor::kMaxFailedStarts; ++i) {
    const Outcome o = ex->run(any_case());
    EXPECT_EQ(o.kind, OutcomeKind::kUnavailable) << "a case that never ran is not to blame";
    EXPECT_NE(o.reason.find("no hello within 1 s"), std::string::npos) << o.reason;
  }
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(spent, 30.0);
  EXPECT_FALSE(ex->unavailable_reason().empty());
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(ex->run(any_case()).kind, OutcomeKind::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::milliseconds(500))
      << "an executor that cannot start is not tried again";
}

long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);) {
    if (l.rfind("VmHWM:", 0) == 0) return std::stol(l.substr(6));
  }
  return 0;
}

// Before the fix, a 100 MB line was read whole (hundreds of MB).
TEST(ExternalExecutorProtocol, OverlongAnswerIsRefusedInBoundedMemory) {
  ::setenv("FAKE_LINE_BYTES", "100000000", 1);
  auto ex = fake("long-line", 60);
  const long before = peak_rss_kib();
  const Outcome o = ex->run(any_case());
  const long grown = peak_rss_kib() - before;
  EXPECT_EQ(o.kind, OutcomeKind::kCrash);
  EXPECT_NE(o.reason.find("longer than"), std::string::npos) << o.reason;
  EXPECT_LT(grown, static_cast<long>(ExternalExecutor::kMaxLineBytes / 1024) + 32 * 1024);
  EXPECT_EQ(ex->run(any_case()).reason, "fake answer 2");
}

TEST(ExternalExecutorProcess, ItsGroupGoesWithIt) {
  const auto pids =
      std::filesystem::temp_directory_path() / ("collfuzz-fake-pids-" + std::to_string(::getpid()));
  std::filesystem::remove_all(pids);
  std::filesystem::create_directories(pids);
  ::setenv("FAKE_PIDS_DIR", pids.c_str(), 1);
  std::vector<pid_t> started;
  {
    auto ex = fake("slow", 1);
    ex->run(any_case());  // a timeout: killed and restarted
    ex->run(any_case());
    for (const auto& e : std::filesystem::directory_iterator(pids)) {
      std::ifstream in(e.path());
      for (long p; in >> p;) started.push_back(static_cast<pid_t>(p));
    }
  }
  ::unsetenv("FAKE_PIDS_DIR");
  std::filesystem::remove_all(pids);
  ASSERT_EQ(started.size(), 4u) << "two executors, each with a sleep";
  for (pid_t p : started) EXPECT_TRUE(eventually([&] { return !alive(p); })) << p;
}

TEST(ExternalExecutorProcess, LogIsPrivateAndRemovedOrUnderTheGivenDirectory) {
  std::string path;
  {
    auto ex = fake("ok");
    ex->run(any_case());
    path = ex->log_path();
    EXPECT_EQ(path.find(std::filesystem::temp_directory_path().string() + "/collfuzz-fake-"),
              std::string::npos)
        << "not the old predictable name";
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    EXPECT_NE(text.find("fake executor"), std::string::npos) << "its stderr is in the log";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path()));

  const auto dir =
      std::filesystem::temp_directory_path() / ("collfuzz-logs-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    auto ex = fake("ok", 30, dir.string());
    ex->run(any_case());
    path = ex->log_path();
    EXPECT_EQ(std::filesystem::path(path).parent_path(), dir);
  }
  EXPECT_TRUE(std::filesystem::exists(path)) << "a campaign keeps its executors' logs";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz
