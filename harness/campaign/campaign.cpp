#include "harness/campaign/campaign.h"

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "harness/campaign/campaign_lock.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/campaign_summary.h"
#include "harness/campaign/confirmation.h"
#include "harness/campaign/crash_report.h"
#include "harness/campaign/finding_repro_run.h"
#include "harness/campaign/progress_display.h"
#include "harness/campaign/shared_memory.h"
#include "harness/campaign/slow_worker.h"
#include "harness/campaign/timeline.h"
#include "harness/campaign/worker.h"
#include "harness/campaign/worker_board.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/executors/jax_python.h"
#include "harness/process/child_process.h"
#include "harness/runner/atomic_file.h"
#include "oracles/reference/rules.h"

namespace collfuzz::campaign {

namespace {

// Sums the workers' executor tallies (executor_tally.h) by executor name.
std::vector<ProgressSnapshot::ExecutorProgress> executor_progress(const CampaignOptions& o,
                                                                  const WorkerBoard& board,
                                                                  std::int64_t slow_jobs) {
  std::vector<ProgressSnapshot::ExecutorProgress> out;
  std::vector<std::uint64_t> lo;
  std::vector<std::uint64_t> hi;
  const auto add = [&](const std::vector<std::string>& names, const ExecutorTally* tallies) {
    for (std::size_t k = 0; k < names.size() && k < kMaxTalliedExecutors; ++k) {
      std::size_t at = 0;
      while (at < out.size() && out[at].name != names[k]) ++at;
      if (at == out.size()) {
        out.push_back({names[k], 0, 0});
        lo.push_back(0);
        hi.push_back(0);
      }
      out[at].compared += tallies[k].compared.load(std::memory_order_relaxed);
      lo[at] |= tallies[k].rules_lo.load(std::memory_order_relaxed);
      hi[at] |= tallies[k].rules_hi.load(std::memory_order_relaxed);
    }
  };
  const std::vector<std::string> fast = fast_executor_names(o);
  for (std::int64_t w = 0; w < o.jobs && w < kMaxJobs; ++w) add(fast, board.slots[w].executors);
  const std::vector<std::string> slow =
      slow_jobs > 0 ? slow_executor_names(o) : std::vector<std::string>{};
  // A slow-pool worker s keeps its tallies in board slot jobs + s (its Worker's slot).
  for (std::int64_t s = 0; s < slow_jobs && o.jobs + s < kMaxJobs; ++s)
    add(slow, board.slots[o.jobs + s].executors);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].rules_hit = static_cast<std::size_t>(std::popcount(lo[i]) + std::popcount(hi[i]));
    out[i].rules_lo = lo[i];
    out[i].rules_hi = hi[i];
  }
  return out;
}

}  // namespace
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// SIGINT, SIGTERM and SIGHUP (a closed terminal) stop the campaign as its budget's end does;
// the previous handlers are restored when it ends.
class InterruptHandler {
 public:
  InterruptHandler() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGHUP, &sa, &old_hup_);
  }
  ~InterruptHandler() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
  }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
};

std::int64_t count_claims(const std::filesystem::path& dir) {
  std::int64_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    n += e.path().extension() == ".claim" ? 1 : 0;
  return n;
}

struct WorkerRun {
  process::ChildProcess child;
  bool running = false;
  bool killed_for_hang = false;
  bool killed_at_stop = false;  // still busy (a slow external executor) well after the budget
  std::int64_t last_heartbeat = -1;
  std::chrono::steady_clock::time_point last_progress;
  std::chrono::steady_clock::time_point started;
};

// Saves a stopped worker's state; a full disk is noted (the campaign then stops), not thrown.
void save_or_note_disk_full(const CampaignDirectory& dir, const WorkerState& state,
                            std::string& disk_full) {
  try {
    dir.save_worker(state);
  } catch (const DiskFullError& e) {
    if (disk_full.empty()) disk_full = e.what();
  }
}

// The body of a worker process.
int run_worker(const CampaignOptions& o, std::int64_t w,
               const std::optional<std::chrono::steady_clock::time_point>& deadline,
               const CampaignDirectory& dir, WorkerBoard& board, const WorkerState& saved,
               SlowQueue& queue) {
  CaseCheck check(worker_executors(o, false), o.level);
  FindingsStore worker_store(dir.findings());
  WorkerConfig config;
  config.seed = o.seed;
  config.worker = w;
  config.jobs = o.jobs;
  config.shard = o.shard;
  config.case_limit = o.cases;
  config.deadline = deadline;
  config.shrink = o.shrink;
  config.confirm = ConfirmPolicy{o.confirm, o.confirm_executors};
  config.known = &o.known;
  config.known_bugs = o.known_bugs.get();
  if (uses_slow_pool(o)) offer_to_pool(config, o, queue);
  Worker worker(config, check, &worker_store, &dir, &board.slots[w], &board.stop);
  worker.run(saved);
  return kExitOk;
}

// The runs of every executor, fast and slow, that were not unavailable (this run's and the
// campaign's earlier ones, as the worker states keep them).
std::int64_t compared_runs(const CampaignTotals& t) {
  std::int64_t n = 0;
  for (const auto& [executor, runs] : t.runs) n += runs;
  for (const auto& [reason, runs] : t.unavailable) n -= runs;
  if (t.slow_pool.is_object() && t.slow_pool.contains("workers")) {
    for (const auto& w : t.slow_pool["workers"]) {
      if (!w.contains("executors")) continue;
      for (const auto& [name, e] : w["executors"].items())
        n += e.value("runs", std::int64_t{0}) - e.value("unavailable", std::int64_t{0});
    }
  }
  return n;
}

}  // namespace

Campaign::Campaign(CampaignOptions options) : options_(std::move(options)) {}

int Campaign::run(std::ostream& out, bool terminal) {
  CampaignOptions& o = options_;
  if (o.jobs < 1 || o.jobs > kMaxJobs) {
    throw InputError("--jobs", "expected 1 to " + std::to_string(kMaxJobs) + " worker processes");
  }
  const std::int64_t slow_jobs = uses_slow_pool(o) ? o.slow_jobs : 0;
  if (o.slow_jobs < 0 || o.slow_jobs > static_cast<std::int64_t>(kSlowMaxJobs) ||
      o.jobs + slow_jobs > kMaxJobs) {
    throw InputError("--slow-jobs", "expected 0 to " + std::to_string(kSlowMaxJobs) +
                                        " worker processes, and --jobs + --slow-jobs at most " +
                                        std::to_string(kMaxJobs));
  }
  const CampaignDirectory dir(o.out);
  // Nothing in the directory is touched before the lock is held.
  const CampaignLock lock(dir.out());
  std::filesystem::create_directories(dir.out() / "state");
  FindingsStore store(dir.findings());
  if (const int orphans = store.remove_orphan_claims(); orphans > 0) {
    out << "collfuzz fuzz: removed " << orphans
        << " claim(s) without a finding (left by a process that was killed while reporting)\n";
  }
  if (o.executor_options.log_dir.empty())
    o.executor_options.log_dir = (dir.out() / "logs").string();
  try {
    dir.save_options(o);
  } catch (const DiskFullError& e) {
    out << "collfuzz fuzz: the disk is full: " << terminal_lines(e.what()) << "\n";
    return kExitInternal;
  }

  const CampaignTotals before = merge_worker_states(dir, o.jobs);
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const auto start = std::chrono::steady_clock::now();
  if (o.seconds > 0) {
    const double left = std::max(0.0, o.seconds - before.seconds);
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(left));
  }

  SharedMemory<WorkerBoard> board;
  SharedMemory<SlowQueue> queue;
  const InterruptHandler interrupts;
  // Workers 0 .. jobs-1 are the fast loop; jobs .. jobs+slow_jobs-1 the slow pool.
  const std::int64_t all_jobs = o.jobs + slow_jobs;
  std::vector<WorkerRun> workers(static_cast<std::size_t>(all_jobs));
  std::vector<process::ChildProcess> reporters;
  std::int64_t crashes = 0;       // this run's, fast and slow workers (the progress line)
  std::int64_t slow_crashes = 0;  // the slow pool's (it keeps no state: added to the summary)
  std::string disk_full;          // the first disk-full error: the campaign stops

  // One entry per worker, fast and slow (spawn() writes both for every worker).
  std::vector<double> base_seconds(static_cast<std::size_t>(all_jobs), 0.0);
  // The worker continues from `saved` (the child inherits it); its counters live on the board.
  std::vector<WorkerState> started_from(static_cast<std::size_t>(all_jobs));
  const auto spawn = [&](std::int64_t w, const WorkerState& saved) {
    started_from[static_cast<std::size_t>(w)] = saved;
    board->slots[w].coverage = saved.coverage;
    board->slots[w].total_cases.store(saved.cases);
    base_seconds[static_cast<std::size_t>(w)] = saved.seconds;
    WorkerRun& p = workers[static_cast<std::size_t>(w)];
    std::string why_not;
    const bool forked = p.child.fork(
        [&]() -> int {
          std::signal(SIGINT, SIG_IGN);  // the supervisor stops workers through the board
          // Its executors' groups, where the supervisor can kill them if this process dies.
          process::use_group_table(&board->slots[w].groups);
          try {
            if (w >= o.jobs)
              return run_slow_worker(o, w - o.jobs, deadline, dir.findings(), *board, *queue);
            return run_worker(o, w, deadline, dir, *board, saved, *queue);
          } catch (const DiskFullError& e) {
            std::cerr << "collfuzz: worker " << w << ": " << terminal_lines(e.what()) << "\n";
            return kWorkerExitDiskFull;
          } catch (const std::exception& e) {
            std::cerr << "collfuzz: worker " << w << ": " << terminal_lines(e.what()) << "\n";
            return kExitInternal;
          }
        },
        why_not);
    if (!forked) throw std::runtime_error(why_not);
    p.running = true;
    p.killed_for_hang = false;
    p.killed_at_stop = false;
    p.last_heartbeat = -1;
    p.last_progress = std::chrono::steady_clock::now();
    p.started = p.last_progress;
  };
  for (std::int64_t w = 0; w < o.jobs; ++w) spawn(w, dir.load_worker(w));
  for (std::int64_t w = o.jobs; w < all_jobs; ++w) spawn(w, WorkerState{});

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
    if (slow_jobs > 0) s.waiting = slow_pool_waiting(o, *queue, 5.0);
    s.executors = executor_progress(o, *board, slow_jobs);
    return s;
  };

  // Each finding's script, run once beside the workers and at the end (finding_repro_run.h),
  // within the budget plus its grace.
  FindingReproRunner repro(dir.findings(), JaxPython::resolve(o.executor_options.python, "").python,
                           o.executor_options.log_dir, o.shrink, o.run_scripts);
  std::optional<std::chrono::steady_clock::time_point> repro_until;
  if (deadline) {
    repro_until = *deadline + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(FindingReproRunner::kGraceSeconds));
  }

  auto last_shown = start;
  // At the budget's end a worker finishes its case; one still busy this long after (a slow
  // external executor) is killed: its findings are on disk already, and its state from its last
  // save (at most a second old) resumes it.
  // A slow worker keeps no state and writes a finding as found before it shrinks it, so one
  // still in a JAX run is stopped after kSlowStopGrace: what it loses is that run (and a
  // candidate still being confirmed), and the campaign ends within its budget plus a few
  // seconds instead of waiting on interpret mode.
  constexpr auto kStopGrace = std::chrono::seconds(10);
  constexpr auto kSlowStopGrace = std::chrono::seconds(2);
  std::optional<std::chrono::steady_clock::time_point> stop_since;
  while (true) {
    if (g_interrupted || (deadline && std::chrono::steady_clock::now() >= *deadline))
      board->stop.store(1);
    if (board->stop.load() && !stop_since) stop_since = std::chrono::steady_clock::now();
    bool any_running = false;
    for (std::int64_t w = 0; w < all_jobs; ++w) {
      WorkerRun& p = workers[static_cast<std::size_t>(w)];
      if (!p.running) continue;
      const std::optional<int> exit = p.child.poll_exit();
      if (!exit) {
        // Still running: is it making progress?
        const std::int64_t hb = board->slots[w].heartbeat.load(std::memory_order_relaxed);
        const auto now = std::chrono::steady_clock::now();
        if (hb != p.last_heartbeat) {
          p.last_heartbeat = hb;
          p.last_progress = now;
        } else if (!p.killed_for_hang &&
                   now - p.last_progress > std::chrono::duration<double>(o.worker_hang_seconds())) {
          p.child.signal_group(SIGKILL);
          p.killed_for_hang = true;
        }
        if (stop_since && now - *stop_since > (w >= o.jobs ? kSlowStopGrace : kStopGrace) &&
            !p.killed_for_hang && !p.killed_at_stop) {
          p.child.signal_group(SIGKILL);
          p.killed_at_stop = true;
        }
        any_running = true;
        continue;
      }
      const int status = *exit;
      p.running = false;
      // Whatever the worker started and left behind (an executor's group when it was killed)
      // goes with it.
      process::kill_groups(board->slots[w].groups);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitDiskFull) {
        // Not a crash, and no restart: nothing more can be saved. Its state file is the last
        // one it saved.
        if (disk_full.empty()) disk_full = "worker " + std::to_string(w) + " could not save";
        board->stop.store(1);
        continue;
      }
      if (w >= o.jobs) {
        // A slow pool worker keeps no state: one that died (not stopped by the campaign) is
        // counted as a crash and replaced; its executors' own failures are findings already.
        if (!p.killed_at_stop) {
          ++crashes;
          ++slow_crashes;
          // Which case it was on, for the summary (slow-deaths.tsv).
          record_slow_worker_death(dir.out(), o, *queue, w - o.jobs,
                                   board->slots[w].current_index.load(), status);
        }
        if (!board->stop.load()) {
          spawn(w, WorkerState{});
          any_running = true;
        }
        continue;
      }
      // The worker's state: the counters from the board (always current), the rest from its
      // last save; one that died before its first save left the file older than what it
      // started from.
      const WorkerSlot& slot = board->slots[w];
      WorkerState state = dir.load_worker(w);
      if (state.next_index < started_from[static_cast<std::size_t>(w)].next_index) {
        state = started_from[static_cast<std::size_t>(w)];
      }
      state.cases = slot.total_cases.load();
      state.coverage = slot.coverage;
      state.seconds =
          base_seconds[static_cast<std::size_t>(w)] +
          std::chrono::duration<double>(std::chrono::steady_clock::now() - p.started).count();
      if (p.killed_at_stop) {
        // Not a crash: the campaign stopped it. Its last saved state, with the board's counters.
        save_or_note_disk_full(dir, state, disk_full);
        continue;
      }
      // The worker died: a worker crash, counted; a reporter reruns the case it was on and
      // reports it as a finding only when the rerun dies the same way (a worker killed from
      // outside is not one). A new worker continues after that case.
      ++crashes;
      CrashEvent crash;
      crash.index = slot.current_index.load();
      crash.phase = slot.phase.load();
      crash.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      crash.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
      crash.hang = p.killed_for_hang;
      crash.worker = w;
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
        save_or_note_disk_full(dir, state, disk_full);
      }
    }
    // The pool only serves the fast loop: when the fast workers are done (a --cases budget),
    // it stops too.
    bool fast_running = false;
    for (std::int64_t w = 0; w < o.jobs; ++w)
      fast_running = fast_running || workers[static_cast<std::size_t>(w)].running;
    if (slow_jobs > 0 && !fast_running) board->stop.store(1);
    if (std::chrono::steady_clock::now() - last_shown > std::chrono::milliseconds(250)) {
      progress.update(snapshot());
      timeline.record(snapshot());
      last_shown = std::chrono::steady_clock::now();
    }
    if (!any_running) break;
    repro.step(g_interrupted ? std::optional(std::chrono::steady_clock::now()) : repro_until);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& reporter : reporters) {
    const int status = reporter.wait();
    if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitDiskFull && disk_full.empty())
      disk_full = "a crash reporter could not save";
  }
  const ProgressSnapshot last = snapshot();
  progress.finish(last);
  timeline.record(last, true);
  // The scripts not run yet (after the last snapshot: their time is not the loop's).
  if (disk_full.empty()) repro.finish(repro_until, g_interrupted != 0);

  CampaignTotals totals = merge_worker_states(dir, o.jobs);
  totals.worker_crashes += slow_crashes;
  totals.run_cases = last.cases;
  totals.run_seconds = last.seconds;
  totals.executor_tallies = last.executors;
  totals.flaky = load_flaky(dir.out());
  totals.known = FindingsStore(dir.out() / "known").load_all();
  std::string slow_pool_lines;
  if (slow_jobs > 0) {
    slow_pool_lines = write_slow_pool_report(dir.out(), o, *queue, totals.slow_pool);
  }
  // Each slow executor's profile, pool or not (the health checks' rules per profile).
  for (const auto& ex : worker_executors(o, true)) {
    if (!is_slow_executor(ex->name())) continue;
    totals.slow_profiles[ex->name()] = ex->profile();
    for (const Rule& r : all_rules()) {
      if (!ex->observes_stage(to_string(r.stage)))
        totals.unobserved_stages[ex->name()].insert(to_string(r.stage));
    }
  }
  const auto findings = store.load_all();
  std::size_t groups = 0;
  if (disk_full.empty()) {
    try {
      groups = write_summary(dir, o, totals, findings)["groups"].size();
    } catch (const DiskFullError& e) {
      disk_full = e.what();
    }
  }
  if (!disk_full.empty()) {
    // Every file written before is intact (each write is atomic); a claim whose finding could
    // not be written was given up. Nothing was restarted.
    store.remove_orphan_claims();
    out << "collfuzz fuzz: stopped: the disk is full (" << disk_full << "). " << totals.cases
        << " cases and " << findings.size() << " findings saved before are kept in "
        << terminal_text(dir.out().string())
        << "; free some space, then --resume continues the campaign.\n";
    return kExitInternal;
  }
  if (!totals.flaky.empty()) {
    out << "collfuzz fuzz: " << totals.flaky.size()
        << " flaky disagreement(s) (did not repeat on every rerun; "
        << "not findings): " << terminal_text((dir.out() / "flaky").string()) << "\n";
  }
  if (!totals.known.empty()) {
    std::size_t bugs = 0;
    for (const auto& k : totals.known) bugs += k.outcomes.contains("known_bug") ? 1 : 0;
    out << "collfuzz fuzz: " << totals.known.size() - bugs
        << " known divergence(s) listed in the baseline, " << bugs
        << " known JAX bug(s) (counted, not findings): "
        << terminal_text((dir.out() / "known").string()) << "\n";
    for (const auto& k : totals.known) {
      if (!k.outcomes.contains("known_bug")) continue;
      out << "collfuzz fuzz:   known JAX bug "
          << terminal_text(k.outcomes["known_bug"].value("id", std::string())) << ": "
          << terminal_text(k.signature) << "\n";
    }
  }
  if (slow_jobs > 0) out << "collfuzz fuzz: slow pool:\n" << slow_pool_lines;
  out << "collfuzz fuzz: " << totals.cases << " cases in "
      << static_cast<std::int64_t>(totals.seconds) << " s, " << totals.coverage.rules_hit() << "/"
      << totals.coverage.rules_reachable() << " rules hit, " << findings.size() << " findings in "
      << groups << " root-cause groups; summary in "
      << terminal_text((dir.out() / "summary.md").string()) << "\n";
  for (const auto& f : findings)
    out << "  " << terminal_text(f.signature) << ": "
        << terminal_text((dir.findings() / f.case_file).string()) << "\n";
  // Nothing compared: no executor asked for ran a case here (every run unavailable), decided
  // from the runs as run and replay do. Only the reference, asked for alone, compares nothing.
  if (!o.executors.empty() && compared_runs(totals) == 0 && findings.empty()) {
    out << "collfuzz fuzz: nothing was compared: no executor ran a case here (every run was "
           "unavailable; see the summary's unavailable runs)"
        << (o.allow_unavailable ? "\n" : ". --allow-unavailable accepts that (for local use)\n");
    if (!o.allow_unavailable) return kExitMismatch;
  }
  return findings.empty() ? kExitOk : kExitMismatch;
}

}  // namespace collfuzz::campaign
