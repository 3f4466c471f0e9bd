// Process hygiene (issue 10): every child is in a group of its own, dies with its parent, and is
// reaped with its whole group; lines are read with a deadline and a bounded length; logs are
// created safely and removed. Each test waits for conditions with bounded polling.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "harness/process/child_process.h"
#include "harness/process/log_file.h"
#include "harness/process/process_groups.h"

namespace collfuzz::process {
namespace {

// Alive: exists and is not a zombie (a container's init may leave zombies unreaped).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' &&
         text[close + 2] != 'X';
}

// Polls `done` every 20 ms for at most `seconds`.
bool eventually(const std::function<bool()>& done, double seconds = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// A shell child that starts `sleep 1000` in the background (in its group) and prints its pid.
std::vector<std::string> sleeper_parent() {
  return {"/bin/sh", "-c", "sleep 1000 & echo $!; exec sleep 1000"};
}

pid_t read_pid(ChildProcess& child) {
  std::string line;
  if (child.read_line(20, 100, line) != ChildProcess::Read::kLine) return -1;
  return static_cast<pid_t>(std::stol(line));
}

TEST(ChildProcess, RunsInItsOwnGroupAndStopKillsTheWholeGroup) {
  ChildProcess child;
  std::string why;
  ASSERT_TRUE(child.spawn(sleeper_parent(), -1, why)) << why;
  const pid_t grandchild = read_pid(child);
  ASSERT_GT(grandchild, 0);
  EXPECT_EQ(::getpgid(child.pid()), child.pid());
  EXPECT_NE(::getpgid(child.pid()), ::getpgrp());
  EXPECT_EQ(::getpgid(grandchild), child.pid());
  child.stop();
  EXPECT_FALSE(child.running());
  EXPECT_TRUE(eventually([&] { return !alive(grandchild); })) << "the group outlived stop()";
}

TEST(ChildProcess, ExitedChildIsReapedWithItsGroup) {
  ChildProcess child;
  std::string why;
  // The leader exits at once; its background sleep would be left behind.
  ASSERT_TRUE(child.spawn({"/bin/sh", "-c", "sleep 1000 & echo $!"}, -1, why)) << why;
  const pid_t grandchild = read_pid(child);
  ASSERT_GT(grandchild, 0);
  std::optional<int> status;
  ASSERT_TRUE(eventually([&] { return (status = child.poll_exit()).has_value(); }));
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_TRUE(eventually([&] { return !alive(grandchild); }));
}

// A process that starts a child and then is SIGKILLed: the child (a program, or a forked copy
// that started a program with a background child of its own) must not outlive it.
void expect_dies_with_parent(bool forked_middle) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ChildProcess parent;
  std::string why;
  ASSERT_TRUE(parent.fork(
      [&] {
        ::close(pipe_fds[0]);
        ChildProcess child;
        std::string w;
        ChildProcess middle;
        if (forked_middle) {
          // A campaign worker's shape: a fork that starts an executor with a child of its own.
          int inner[2];
          if (::pipe(inner) != 0) return 1;
          middle.fork(
              [&] {
                ChildProcess exec;
                std::string w2;
                if (!exec.spawn(sleeper_parent(), -1, w2)) return 1;
                const std::string text =
                    std::to_string(exec.pid()) + " " + std::to_string(read_pid(exec)) + "\n";
                [[maybe_unused]] auto n = ::write(inner[1], text.data(), text.size());
                ::pause();
                return 0;
              },
              w);
          char buf[64] = {};
          [[maybe_unused]] auto n = ::read(inner[0], buf, sizeof buf - 1);
          const std::string text = std::to_string(middle.pid()) + " " + buf;
          [[maybe_unused]] auto m = ::write(pipe_fds[1], text.data(), text.size());
        } else {
          if (!child.spawn(sleeper_parent(), -1, w)) return 1;
          const std::string text =
              std::to_string(child.pid()) + " " + std::to_string(read_pid(child)) + "\n";
          [[maybe_unused]] auto n = ::write(pipe_fds[1], text.data(), text.size());
        }
        ::pause();
        return 0;
      },
      why))
      << why;
  ::close(pipe_fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n;
       text.find('\n') == std::string::npos && (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  std::istringstream words(text);
  std::vector<pid_t> pids;
  for (long p; words >> p;) pids.push_back(static_cast<pid_t>(p));
  ASSERT_GE(pids.size(), 2u) << text;
  for (pid_t p : pids) EXPECT_TRUE(alive(p));
  // SIGKILL to the parent alone (not its group): nothing of it may be left.
  ::kill(parent.pid(), SIGKILL);
  parent.wait();
  // A program started directly dies with its parent (its own children are its business); a
  // forked collfuzz process (a campaign worker) takes its executors' whole groups with it.
  const pid_t own_child = pids[1];
  if (!forked_middle) pids.resize(1);
  for (pid_t p : pids)
    EXPECT_TRUE(eventually([&] { return !alive(p); })) << "pid " << p << " survived";
  if (!forked_middle) ::kill(own_child, SIGKILL);
}

TEST(ChildProcess, ProgramDiesWithItsParent) { expect_dies_with_parent(false); }
TEST(ChildProcess, ForkedChildTakesItsExecutorsGroupWithIt) { expect_dies_with_parent(true); }

TEST(ChildProcess, KillGroupsReachesWhatAKilledProcessLeft) {
  // The supervisor's view: a worker registered its executor's group in a table; the worker is
  // SIGKILLed (no handler runs); kill_groups() on the table takes the executor's group.
  GroupTable table{};
  ChildProcess child;
  std::string why;
  ASSERT_TRUE(child.spawn(sleeper_parent(), -1, why)) << why;
  const pid_t grandchild = read_pid(child);
  table.groups[0].store(child.pid());
  kill_groups(table);
  EXPECT_EQ(table.groups[0].load(), 0);
  EXPECT_TRUE(eventually([&] { return !alive(grandchild); }));
  child.stop();
}

TEST(ChildProcess, ReadLineTimesOutAndSeesEof) {
  ChildProcess child;
  std::string why;
  ASSERT_TRUE(child.spawn({"/bin/sh", "-c", "read x; echo got $x"}, -1, why)) << why;
  std::string line;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(child.read_line(0.3, 1000, line), ChildProcess::Read::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ASSERT_TRUE(child.write_line("hi"));
  EXPECT_EQ(child.read_line(20, 1000, line), ChildProcess::Read::kLine);
  EXPECT_EQ(line, "got hi");
  EXPECT_EQ(child.read_line(20, 1000, line), ChildProcess::Read::kEof);
}

long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);) {
    if (l.rfind("VmHWM:", 0) == 0) return std::stol(l.substr(6));
  }
  return 0;
}

TEST(ChildProcess, OverlongLineIsRefusedInBoundedMemory) {
  ChildProcess child;
  std::string why;
  // 100 MB without a newline.
  ASSERT_TRUE(
      child.spawn({"/bin/sh", "-c", "head -c 100000000 /dev/zero | tr '\\0' x; echo"}, -1, why))
      << why;
  const long before = peak_rss_kib();
  std::string line;
  EXPECT_EQ(child.read_line(60, std::size_t{1} << 20, line), ChildProcess::Read::kTooLong);
  const long grown = peak_rss_kib() - before;
  EXPECT_LT(grown, 16 * 1024) << "peak RSS grew by " << grown << " KiB for a 1 MiB cap";
  child.stop();
}

TEST(LogFile, PrivateDirectoryIsMadeSafelyAndRemoved) {
  std::string path;
  std::string dir;
  {
    LogFile log("", "unit");
    ASSERT_GE(log.fd(), 0) << log.error();
    path = log.path();
    dir = std::filesystem::path(path).parent_path().string();
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_NE(dir.find("collfuzz-"), std::string::npos);
    ASSERT_EQ(::write(log.fd(), "hello\n", 6), 6);
    EXPECT_EQ(log.tail(3), "lo\n");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(LogFile, NeverWritesThroughAPlantedLinkAndRemovesAnEmptyLog) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collfuzz-logfile-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto target = dir / "target";
  { std::ofstream(target) << "precious\n"; }
  // The name the log would take first.
  std::filesystem::create_symlink(target, dir / ("x-" + std::to_string(::getpid()) + ".log"));
  std::string path;
  {
    LogFile log(dir.string(), "x");
    ASSERT_GE(log.fd(), 0) << log.error();
    path = log.path();
    EXPECT_NE(path, (dir / ("x-" + std::to_string(::getpid()) + ".log")).string());
    ASSERT_EQ(::write(log.fd(), "log\n", 4), 4);
  }
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
  EXPECT_TRUE(std::filesystem::exists(path)) << "a non-empty log in a given directory is kept";
  {
    LogFile empty(dir.string(), "y");
    path = empty.path();
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "an empty log is removed";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz::process
