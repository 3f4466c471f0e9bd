// A campaign worker killed as hung (issue 10): before, the executor it had started (a JAX
// process) was still alive minutes later. The worker's executors are registered in the shared
// board, and the supervisor kills their groups when the worker dies. The executor here is a fake
// (tests/process/fake_executor.py) that never answers its first case and starts a `sleep` of its
// own; --timeout is far away, so the supervisor's hang detection fires first.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "harness/campaign/campaign.h"
#include "harness/campaign/findings_store.h"

namespace collfuzz::campaign {
namespace {

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

TEST(CampaignHang, WorkerKilledAsHungTakesItsExecutorsGroup) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("collfuzz-hang-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto pids = dir / "pids";
  std::filesystem::create_directories(pids);
  ::setenv("FAKE_EXECUTOR_MODE", "slow", 1);
  ::setenv("FAKE_PIDS_DIR", pids.c_str(), 1);

  CampaignOptions o;
  o.seed = 1;
  o.seconds = 5;
  o.jobs = 1;
  o.slow_jobs = 0;  // the executor runs in the fast worker, the one the supervisor kills as hung
  o.out = dir / "campaign";
  o.executors = {"jax-interpret"};
  o.executor_options.python = std::string(COLLFUZZ_SOURCE_DIR) + "/tests/process/fake_executor.py";
  o.executor_options.repo_root = COLLFUZZ_SOURCE_DIR;
  o.executor_options.slow_every = 1;
  o.executor_options.case_timeout_seconds = 600;
  o.hang_seconds = 1.5;
  std::ostringstream out;
  Campaign(o).run(out, false);
  ::unsetenv("FAKE_EXECUTOR_MODE");
  ::unsetenv("FAKE_PIDS_DIR");

  std::vector<pid_t> started;
  for (const auto& e : std::filesystem::directory_iterator(pids)) {
    std::ifstream in(e.path());
    for (long p; in >> p;) started.push_back(static_cast<pid_t>(p));
  }
  ASSERT_GE(started.size(), 2u) << "no executor was started:\n" << out.str();
  for (pid_t p : started)
    EXPECT_TRUE(eventually([&] { return !alive(p); })) << "pid " << p << " outlived the campaign";
  // The hang itself is a finding (a hang is not rerun: it had its whole budget).
  bool hang = false;
  for (const auto& f : FindingsStore(o.out / "findings").load_all())
    hang = hang || f.signature.starts_with("crash:hang:");
  EXPECT_TRUE(hang) << out.str();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz::campaign
