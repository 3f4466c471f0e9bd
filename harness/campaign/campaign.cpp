#include "harness/campaign/campaign.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "harness/campaign/campaign_state.h"
#include "harness/campaign/campaign_summary.h"
#include "harness/campaign/crash_report.h"
#include "harness/campaign/progress_display.h"
#include "harness/campaign/shared_memory.h"
#include "harness/campaign/timeline.h"
#include "harness/campaign/worker.h"
#include "harness/campaign/worker_board.h"
#include "harness/core/errors.h"

namespace collfuzz::campaign {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// Restores the previous handlers of SIGINT and SIGTERM when the campaign ends.
class InterruptHandler {
 public:
  InterruptHandler() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptHandler() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::vector<std::unique_ptr<Executor>> make_executors(const CampaignOptions& o) {
  std::vector<std::unique_ptr<Executor>> out;
  for (const auto& name : o.executors) out.push_back(make_executor(name, o.executor_options));
  return out;
}

std::int64_t count_claims(const std::filesystem::path& dir) {
  std::int64_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    n += e.path().extension() == ".claim" ? 1 : 0;
  return n;
}

struct WorkerProcess {
  pid_t pid = -1;
  bool running = false;
  bool killed_for_hang = false;
  bool killed_at_stop = false;  // still busy (a slow external executor) well after the budget
  std::int64_t last_heartbeat = -1;
  std::chrono::steady_clock::time_point last_progress;
  std::chrono::steady_clock::time_point started;
};

}  // namespace

Campaign::Campaign(CampaignOptions options) : options_(std::move(options)) {}

int Campaign::run(std::ostream& out, bool terminal) {
  CampaignOptions& o = options_;
  if (o.jobs < 1 || o.jobs > kMaxJobs) {
    throw InputError("--jobs", "expected 1 to " + std::to_string(kMaxJobs) + " worker processes");
  }
  const CampaignDirectory dir(o.out);
  std::filesystem::create_directories(dir.out() / "state");
  FindingsStore store(dir.findings());
  dir.save_options(o);

  const CampaignTotals before = merge_worker_states(dir, o.jobs);
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const auto start = std::chrono::steady_clock::now();
  if (o.seconds > 0) {
    const double left = std::max(0.0, o.seconds - before.seconds);
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(left));
  }

  SharedMemory<WorkerBoard> board;
  const InterruptHandler interrupts;
  std::vector<WorkerProcess> workers(static_cast<std::size_t>(o.jobs));
  std::vector<pid_t> reporters;
  std::int64_t crashes = 0;

  std::vector<double> base_seconds(static_cast<std::size_t>(o.jobs), 0.0);
  // The worker continues from `saved` (the child inherits it); its counters live on the board.
  std::vector<WorkerState> started_from(static_cast<std::size_t>(o.jobs));
  const auto spawn = [&](std::int64_t w, const WorkerState& saved) {
    started_from[static_cast<std::size_t>(w)] = saved;
    board->slots[w].coverage = saved.coverage;
    board->slots[w].total_cases.store(saved.cases);
    base_seconds[static_cast<std::size_t>(w)] = saved.seconds;
    std::cout.flush();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      int code = 0;
      try {
        std::signal(SIGINT, SIG_IGN);  // the supervisor stops workers through the board
        std::signal(SIGTERM, SIG_DFL);
        CaseCheck check(make_executors(o), o.level);
        FindingsStore worker_store(dir.findings());
        WorkerConfig config;
        config.seed = o.seed;
        config.worker = w;
        config.jobs = o.jobs;
        config.shard = o.shard;
        config.case_limit = o.cases;
        config.deadline = deadline;
        config.shrink = o.shrink;
        Worker worker(config, check, &worker_store, &dir, &board->slots[w], &board->stop);
        worker.run(saved);
      } catch (const std::exception& e) {
        std::cerr << "collfuzz: worker " << w << ": " << e.what() << "\n";
        code = 3;
      }
      std::cout.flush();
      ::_exit(code);
    }
    WorkerProcess& p = workers[static_cast<std::size_t>(w)];
    p.pid = pid;
    p.running = true;
    p.killed_for_hang = false;
    p.last_heartbeat = -1;
    p.last_progress = std::chrono::steady_clock::now();
    p.started = p.last_progress;
  };
  for (std::int64_t w = 0; w < o.jobs; ++w) spawn(w, dir.load_worker(w));

  ProgressDisplay progress(out, terminal);
  TimelineWriter timeline(dir.out() / "timeline.jsonl", o.executors, o.shard, before.seconds,
                          before.cases);
  const auto snapshot = [&] {
    ProgressSnapshot s;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::uint32_t profiles = 0;
    for (std::int64_t w = 0; w < o.jobs; ++w) {
      const WorkerSlot& slot = board->slots[w];
      s.cases += slot.cases.load(std::memory_order_relaxed);
      s.findings += slot.findings.load(std::memory_order_relaxed);
      lo |= slot.rules_lo.load(std::memory_order_relaxed);
      hi |= slot.rules_hi.load(std::memory_order_relaxed);
      profiles |= slot.profiles.load(std::memory_order_relaxed);
      s.workers += workers[static_cast<std::size_t>(w)].running ? 1 : 0;
    }
    for (std::size_t r = 0; r < generators::RuleCoverage::kRules; ++r) {
      if (((r < 64 ? lo : hi) >> (r % 64)) & 1) ++s.rules_hit;
    }
    s.rules_total = generators::RuleCoverage::rules_reachable(profiles);
    s.total_cases = before.cases + s.cases;
    s.findings = count_claims(dir.findings());  // every finding on disk, from every process and run
    s.crashes = crashes;
    return s;
  };

  auto last_shown = start;
  // At the budget's end a worker finishes its case; one still busy this long after (a slow
  // external executor) is killed: its findings are on disk already, and its state from its last
  // save (at most a second old) resumes it.
  constexpr auto kStopGrace = std::chrono::seconds(10);
  std::optional<std::chrono::steady_clock::time_point> stop_since;
  while (true) {
    if (g_interrupted || (deadline && std::chrono::steady_clock::now() >= *deadline))
      board->stop.store(1);
    if (board->stop.load() && !stop_since) stop_since = std::chrono::steady_clock::now();
    bool any_running = false;
    for (std::int64_t w = 0; w < o.jobs; ++w) {
      WorkerProcess& p = workers[static_cast<std::size_t>(w)];
      if (!p.running) continue;
      int status = 0;
      const pid_t r = ::waitpid(p.pid, &status, WNOHANG);
      if (r == 0) {
        // Still running: is it making progress?
        const std::int64_t hb = board->slots[w].heartbeat.load(std::memory_order_relaxed);
        const auto now = std::chrono::steady_clock::now();
        if (hb != p.last_heartbeat) {
          p.last_heartbeat = hb;
          p.last_progress = now;
        } else if (!p.killed_for_hang &&
                   now - p.last_progress > std::chrono::duration<double>(o.hang_seconds)) {
          ::kill(p.pid, SIGKILL);
          p.killed_for_hang = true;
        }
        if (stop_since && now - *stop_since > kStopGrace && !p.killed_for_hang &&
            !p.killed_at_stop) {
          ::kill(p.pid, SIGKILL);
          p.killed_at_stop = true;
        }
        any_running = true;
        continue;
      }
      p.running = false;
      if (r < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) continue;
      if (p.killed_at_stop) {
        // Not a crash: the campaign stopped it. Its last saved state, with the board's counters.
        WorkerState state = dir.load_worker(w);
        if (state.next_index < started_from[static_cast<std::size_t>(w)].next_index) {
          state = started_from[static_cast<std::size_t>(w)];
        }
        state.cases = board->slots[w].total_cases.load();
        state.coverage = board->slots[w].coverage;
        state.seconds =
            base_seconds[static_cast<std::size_t>(w)] +
            std::chrono::duration<double>(std::chrono::steady_clock::now() - p.started).count();
        dir.save_worker(state);
        continue;
      }
      // The worker died: report the case it was on, and start a new worker after that case.
      ++crashes;
      const WorkerSlot& slot = board->slots[w];
      CrashEvent crash;
      crash.index = slot.current_index.load();
      crash.phase = slot.phase.load();
      crash.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      crash.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
      crash.hang = p.killed_for_hang;
      crash.worker = w;
      // Its state: the counters from the board (always current), the rest from its last save.
      WorkerState state = dir.load_worker(w);
      // A worker that died before its first save left the file older than what it started from.
      if (state.next_index < started_from[static_cast<std::size_t>(w)].next_index) {
        state = started_from[static_cast<std::size_t>(w)];
      }
      state.cases = slot.total_cases.load();
      state.coverage = slot.coverage;
      state.seconds =
          base_seconds[static_cast<std::size_t>(w)] +
          std::chrono::duration<double>(std::chrono::steady_clock::now() - p.started).count();
      state.next_index = o.shard.local(crash.index) + static_cast<std::uint64_t>(o.jobs);
      ++state.crashes;
      const std::string signature = crash_signature(crash, o.executors);
      ++state.signatures[signature];
      // A signature reported before needs no reporter; the state goes to the new worker in
      // memory (it saves it within a second), or to the file when the campaign stops here.
      if (!std::filesystem::exists(dir.findings() / (FindingsStore::slug(signature) + ".claim"))) {
        reporters.push_back(spawn_crash_reporter(o, dir, crash));
      }
      if (!board->stop.load()) {
        spawn(w, state);
        any_running = true;
      } else {
        dir.save_worker(state);
      }
    }
    if (std::chrono::steady_clock::now() - last_shown > std::chrono::milliseconds(250)) {
      progress.update(snapshot());
      timeline.record(snapshot());
      last_shown = std::chrono::steady_clock::now();
    }
    if (!any_running) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (pid_t pid : reporters) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  const ProgressSnapshot last = snapshot();
  progress.finish(last);
  timeline.record(last, true);

  CampaignTotals totals = merge_worker_states(dir, o.jobs);
  totals.run_cases = last.cases;
  totals.run_seconds = last.seconds;
  const auto findings = store.load_all();
  write_summary(dir, o, totals, findings);
  out << "collfuzz fuzz: " << totals.cases << " cases in "
      << static_cast<std::int64_t>(totals.seconds) << " s, " << totals.coverage.rules_hit() << "/"
      << totals.coverage.rules_reachable() << " rules hit, " << findings.size()
      << " findings; summary in " << (dir.out() / "summary.md").string() << "\n";
  for (const auto& f : findings)
    out << "  " << f.signature << ": " << (dir.findings() / f.case_file).string() << "\n";
  return findings.empty() ? kExitOk : kExitMismatch;
}

}  // namespace collfuzz::campaign
