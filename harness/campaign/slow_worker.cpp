#include "harness/campaign/slow_worker.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "harness/campaign/case_check.h"
#include "harness/campaign/findings_store.h"
#include "harness/campaign/slow_sampling.h"
#include "harness/core/errors.h"
#include "harness/runner/atomic_file.h"
#include "oracles/reference/reference.h"

namespace collfuzz::campaign {

std::filesystem::path unavailable_log(const std::filesystem::path& out, std::int64_t worker) {
  return out / ("slow-unavailable-" + std::to_string(worker) + ".tsv");
}

std::filesystem::path stall_log(const std::filesystem::path& out, std::int64_t worker) {
  return out / ("slow-stalls-" + std::to_string(worker) + ".tsv");
}

std::filesystem::path slow_death_log(const std::filesystem::path& out) {
  return out / "slow-deaths.tsv";
}

void record_slow_worker_death(const std::filesystem::path& out, const CampaignOptions& o,
                              SlowQueue& queue, std::int64_t s, std::uint64_t slot_index,
                              int status) {
  if (s < 0 || s >= static_cast<std::int64_t>(kSlowMaxJobs)) return;
  SlowWorkerStats& st = queue.workers[s];
  const std::vector<std::string> names = slow_executor_names(o);
  const std::int32_t k = st.busy_executor.load() - 1;
  const bool running = k >= 0 && static_cast<std::size_t>(k) < names.size();
  const std::uint64_t index = running ? st.busy_index.load() : slot_index;
  const std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                          : WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                              : "status " + std::to_string(status);
  std::ofstream log(slow_death_log(out), std::ios::app);
  log << s << '\t' << index << '\t' << (running ? names[static_cast<std::size_t>(k)] : "-") << '\t'
      << how << '\n';
  st.busy_executor.store(0);  // the replacement starts idle
}

bool uses_slow_pool(const CampaignOptions& o) {
  return o.slow_jobs > 0 && !slow_executor_names(o).empty();
}

std::vector<std::string> slow_executor_names(const CampaignOptions& o) {
  std::vector<std::string> out;
  for (const auto& name : o.executors) {
    if (is_slow_executor(name)) out.push_back(name);
  }
  return out;
}

std::vector<std::string> fast_executor_names(const CampaignOptions& o) {
  const bool pool = uses_slow_pool(o);
  std::vector<std::string> out;
  for (const auto& name : o.executors) {
    if (!pool || !is_slow_executor(name)) out.push_back(name);
  }
  return out;
}

std::vector<std::unique_ptr<Executor>> worker_executors(const CampaignOptions& o, bool slow) {
  const bool pool = uses_slow_pool(o);
  std::vector<std::unique_ptr<Executor>> out;
  for (const auto& name : o.executors) {
    if (pool && is_slow_executor(name) != slow) continue;
    out.push_back(make_executor(name, o.executor_options));
  }
  return out;
}

unsigned slow_profiles(const CampaignOptions& o) {
  unsigned bits = 0;
  for (const auto& name : slow_executor_names(o)) {
    bits |= 1u << static_cast<int>(make_executor(name, o.executor_options)->profile());
  }
  return bits;
}

void offer_to_pool(WorkerConfig& config, const CampaignOptions& o, SlowQueue& queue) {
  const unsigned profiles = slow_profiles(o);
  // The profiles that only slow executors check (interpret, when jax-interpret is the only
  // executor of it): the fast loop predicts nothing for them. One case in kProbeEvery of those
  // whose target names such a profile is predicted here, its rule counted in the worker's
  // coverage (so that the profile's column of the summary counts the cases the reference
  // predicted for it), and offered whatever the queue's state while its key (profile, outcome
  // kind, rule) has been offered fewer than kRareOffers times by this worker: a rare rule's
  // cases reach the pool instead of waiting for one of the few sampled offers.
  unsigned fast = 0;
  for (const auto& name : o.executors) {
    if (!is_slow_executor(name))
      fast |= 1u << static_cast<int>(make_executor(name, o.executor_options)->profile());
  }
  const unsigned probed = profiles & ~fast;
  const std::int64_t every = std::max<std::int64_t>(1, o.offer_every);
  const std::uint64_t salt = sampling_salt("slow-pool");
  const std::uint64_t probe_salt = sampling_salt("slow-pool-probe");
  auto offered_keys = std::make_shared<std::unordered_map<std::uint64_t, std::int64_t>>();
  config.after_case = [&queue, profiles, probed, every, salt, probe_salt, offered_keys](
                          std::uint64_t index, const Case& c, generators::RuleCoverage* coverage) {
    const bool probe = ((probed >> static_cast<int>(c.target.profile)) & 1) != 0 &&
                       sampled_case(index, probe_salt, kProbeEvery);
    const bool sampled = sampled_case(index, salt, every);
    if (!probe && !sampled) return;
    const bool wanted = sampled && pool_wants_offer(queue, index);
    if (!probe && !wanted) return;
    std::uint64_t klass[2] = {0, 0};
    std::uint64_t key[2] = {0, 0};
    const auto classify = [&](int p) {
      const Outcome predicted = predict(c, Profile(p)).outcome;
      klass[p] = behaviour_class(c, predicted);
      key[p] = behaviour_key(predicted);
      return predicted;
    };
    try {
      // The probed profiles first: a probe that is not offered predicts nothing else (the fast
      // worker predicted its own executors' profile already).
      bool rare = false;
      for (int p = 0; p < 2 && probe; ++p) {
        if (!((probed >> p) & 1)) continue;
        const Outcome predicted = classify(p);
        if (coverage) coverage->record(Profile(p), predicted);
        if ((*offered_keys)[key[p]] < kRareOffers) rare = true;
      }
      if (!wanted && !rare) return;
      for (int p = 0; p < 2; ++p) {
        if (((profiles >> p) & 1) && !(probe && ((probed >> p) & 1))) classify(p);
      }
    } catch (const std::exception&) {
      return;  // the fast worker reports the reference's exception itself
    }
    for (int p = 0; p < 2; ++p)
      if (((probed >> p) & 1) && key[p] != 0) ++(*offered_keys)[key[p]];
    offer_candidate(queue, index, klass[0], klass[1], key[0], key[1]);
  };
}

int run_slow_worker(const CampaignOptions& o, std::int64_t s,
                    const std::optional<std::chrono::steady_clock::time_point>& deadline,
                    const std::filesystem::path& findings, WorkerBoard& board, SlowQueue& queue) {
  // The fast loop comes first: the pool (and the executors it starts) runs at a lower priority,
  // on what CPU the fast workers leave.
  errno = 0;
  if (::nice(kSlowPoolNice) == -1 && errno != 0) {
    // Not fatal: the pool then competes with the fast loop as an equal.
  }
  CaseCheck check(worker_executors(o, true), o.level);
  // Each slow executor picks its own cases, by its own profile's novelty, and the executors take
  // turns by the time they have spent: the next pick is for the one that has spent least (a run
  // is charged at least kMinRunSeconds), so each gets an even share of the worker's time and a
  // fast one (jax-lower lowers a case in a fraction of the time interpret mode runs it) runs
  // many more cases than it would in lockstep with a slow one. An executor that cannot run here
  // takes no turns.
  constexpr double kMinRunSeconds = 0.05;
  std::vector<std::string> names;
  std::vector<unsigned> bits;  // per executor: 1 << its profile
  std::vector<NoveltyPicker> pickers;
  std::vector<double> spent;
  for (const auto& ex : check.executors()) {
    names.push_back(ex->name());
    bits.push_back(1u << static_cast<int>(ex->profile()));
    pickers.emplace_back(
        splitmix64(o.seed ^ static_cast<std::uint64_t>(s) ^ (std::uint64_t{names.size()} << 32)));
    spent.push_back(0);
  }
  FindingsStore store(findings);
  SlowWorkerStats& stats = queue.workers[s];
  stats.started_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count());
  WorkerConfig config;
  config.seed = o.seed;
  config.worker = o.jobs + s;
  config.jobs = o.jobs;
  config.deadline = deadline;
  config.shrink = o.shrink;
  config.confirm = ConfirmPolicy{o.confirm, o.confirm_executors};
  config.known = &o.known;
  config.known_bugs = o.known_bugs.get();
  std::uint64_t current = 0;
  std::size_t turn = 0;  // the executor the current case was picked for
  std::string only;      // its name (config.only_executor)
  config.only_executor = &only;
  std::optional<PickedCase> picked;  // the case being run, charged with its executor's time
  // Whether each executor can run here, asked again at most once a second (an external
  // executor's answer looks at the file system, and changes when its process fails to start or
  // says it has no GPU).
  std::vector<char> can_run(names.size(), 1);
  std::vector<std::chrono::steady_clock::time_point> asked(names.size());
  const auto runs_here = [&](std::size_t i) {
    const auto now = std::chrono::steady_clock::now();
    if (asked[i] == std::chrono::steady_clock::time_point{} ||
        now - asked[i] >= std::chrono::seconds(1)) {
      can_run[i] = check.executors()[i]->unavailable_reason().empty() ? 1 : 0;
      asked[i] = now;
    }
    return can_run[i] != 0;
  };
  config.next_index = [&]() -> std::optional<std::uint64_t> {
    // An executor that said it cannot run here (no GPU, no JAX) takes no turns while another
    // can; when none can, each still takes its turns (its runs counted unavailable).
    std::size_t k = names.size();
    for (const bool any : {false, true}) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (!any && !runs_here(i)) continue;
        if (k == names.size() || spent[i] < spent[k]) k = i;
      }
      if (k < names.size()) break;
    }
    if (k == names.size()) return std::nullopt;
    const std::optional<PickedCase> c = pickers[k].pick(queue, bits[k]);
    if (!c) return std::nullopt;
    pickers[k].ran(*c, bits[k]);
    picked = c;
    turn = k;
    only = names[k];
    current = c->index;
    stats.cases.fetch_add(1, std::memory_order_relaxed);
    if (k < kSlowMaxExecutors)
      stats.classes[k].store(
          static_cast<std::int64_t>(pickers[k].classes(check.executors()[k]->profile())));
    return c->index;
  };
  check.set_run_observer([&](std::size_t k, const Outcome* outcome, double seconds) {
    if (k >= kSlowMaxExecutors) return;
    if (!outcome) {
      stats.busy_index.store(current);
      stats.busy_since_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count());
      stats.busy_executor.store(static_cast<std::int32_t>(k) + 1);
      return;
    }
    stats.busy_executor.store(0);
    // Confirmation reruns, shrinking and a finding's report are charged to the executor too.
    if (k < spent.size()) spent[k] += std::max(seconds, kMinRunSeconds);
    if (picked && k == turn) pickers[k].spent(*picked, bits[k], seconds);
    stats.runs[k].fetch_add(1);
    if (outcome->kind == OutcomeKind::kTimeout) stats.timeouts[k].fetch_add(1);
    if (outcome->kind == OutcomeKind::kUnavailable) {
      stats.unavailable[k].fetch_add(1);
      // The reason (for jax-ir, the op or PTX string it does not model), one line per run, for
      // the summary's count of reasons (write_slow_pool_report).
      std::ofstream reasons(unavailable_log(findings.parent_path(), s), std::ios::app);
      const std::string why = outcome->reason.substr(0, outcome->reason.find('\n'));
      reasons << check.executors()[k]->name() << '\t' << why.substr(0, 160) << '\n';
    }
    if (outcome->kind == OutcomeKind::kCrash) stats.crashes[k].fetch_add(1);
    if (seconds >= kStallSeconds) {
      stats.stalls[k].fetch_add(1);
      // Which case stalled and how it ended, one line a stall (stall_log): replay it with
      // `collfuzz gen --seed S --first INDEX --count 1`.
      std::ofstream stalls(stall_log(findings.parent_path(), s), std::ios::app);
      const std::string why = outcome->reason.substr(0, outcome->reason.find('\n'));
      stalls << check.executors()[k]->name() << '\t' << current << '\t' << seconds << '\t'
             << to_string(outcome->kind) << '\t' << why.substr(0, 200) << '\n';
    }
    const auto ms = static_cast<std::int64_t>(seconds * 1000);
    if (ms > stats.longest_ms[k].load()) stats.longest_ms[k].store(ms);
    stats.busy_ms[k].fetch_add(ms);
  });
  // No case limit and no saved state: the pool runs what the fast workers offer.
  Worker worker(config, check, &store, nullptr, &board.slots[o.jobs + s], &board.stop);
  worker.run(WorkerState{});
  return kExitOk;
}

namespace {

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string slow_pool_waiting(const CampaignOptions& o, const SlowQueue& queue,
                              double after_seconds) {
  const std::vector<std::string> names = slow_executor_names(o);
  std::string out;
  for (std::int64_t s = 0; s < o.slow_jobs && s < static_cast<std::int64_t>(kSlowMaxJobs); ++s) {
    const SlowWorkerStats& st = queue.workers[s];
    const std::int32_t k = st.busy_executor.load() - 1;
    if (k < 0 || static_cast<std::size_t>(k) >= names.size()) continue;
    const double busy = static_cast<double>(steady_ns() - st.busy_since_ns.load()) / 1e9;
    if (busy < after_seconds) continue;
    out += (out.empty() ? "" : "; ") + names[static_cast<std::size_t>(k)] + ": case " +
           with_commas(st.busy_index.load()) + " for " +
           std::to_string(static_cast<std::int64_t>(busy)) + " s";
  }
  return out;
}

std::string write_slow_pool_report(const std::filesystem::path& out, const CampaignOptions& o,
                                   const SlowQueue& queue, nlohmann::json& report) {
  const std::vector<std::string> names = slow_executor_names(o);
  nlohmann::json j;
  j["slow_jobs"] = o.slow_jobs;
  j["offer_every"] = o.offer_every;
  j["stall_seconds"] = kStallSeconds;
  j["offered"] = queue.offered.load();
  j["overwritten"] = queue.overwritten.load();
  j["skipped"] = queue.skipped.load();
  j["not_offered"] = queue.not_offered.load();
  std::ostringstream lines;
  for (std::int64_t s = 0; s < o.slow_jobs && s < static_cast<std::int64_t>(kSlowMaxJobs); ++s) {
    const SlowWorkerStats& st = queue.workers[s];
    nlohmann::json w;
    w["cases"] = st.cases.load();
    lines << "  slow worker " << s << ": " << st.cases.load() << " cases;";
    for (std::size_t k = 0; k < names.size() && k < kSlowMaxExecutors; ++k) {
      nlohmann::json e;
      e["runs"] = st.runs[k].load();
      e["classes_covered"] = st.classes[k].load();
      e["timeouts"] = st.timeouts[k].load();
      e["stalls"] = st.stalls[k].load();
      e["longest_run_seconds"] = static_cast<double>(st.longest_ms[k].load()) / 1000.0;
      e["unavailable"] = st.unavailable[k].load();
      e["crashes"] = st.crashes[k].load();
      // Its speed: cases/s over the worker's life (what the campaign got from it), cases/s while
      // it ran (its own rate, as a replay of the same cases would run them back to back), and its
      // share of the worker's time. docs/fuzzing.md compares them with the replay rate.
      const double busy_total = static_cast<double>(st.busy_ms[k].load()) / 1000.0;
      const double life = st.started_ns.load() > 0
                              ? static_cast<double>(steady_ns() - st.started_ns.load()) / 1e9
                              : 0.0;
      const auto runs = static_cast<double>(st.runs[k].load());
      e["busy_seconds"] = busy_total;
      e["worker_seconds"] = life;
      e["cases_per_second"] = life > 0 ? runs / life : 0.0;
      e["own_cases_per_second"] = busy_total > 0 ? runs / busy_total : 0.0;
      e["time_share"] = life > 0 ? busy_total / life : 0.0;
      if (const auto r = o.replay_rates.find(names[k]); r != o.replay_rates.end())
        e["replay_cases_per_second"] = r->second;
      // A run still going when the worker was stopped (or killed at the budget's end).
      std::int64_t stalls = st.stalls[k].load();
      if (st.busy_executor.load() == static_cast<std::int32_t>(k) + 1) {
        const double busy = static_cast<double>(steady_ns() - st.busy_since_ns.load()) / 1e9;
        e["unfinished_run"] = {{"case", st.busy_index.load()}, {"seconds", busy}};
        if (busy >= kStallSeconds) e["stalls"] = ++stalls;
      }
      w["executors"][names[k]] = e;
      lines << " " << names[k] << " " << st.runs[k].load() << " runs, " << st.classes[k].load()
            << " classes, " << st.timeouts[k].load() << " timeouts, " << stalls << " stalls;";
    }
    lines << "\n";
    j["workers"].push_back(w);
  }
  // Why the slow executors marked cases unavailable, with how many runs gave each reason.
  std::map<std::pair<std::string, std::string>, std::int64_t> reasons;
  for (std::int64_t s = 0; s < o.slow_jobs && s < static_cast<std::int64_t>(kSlowMaxJobs); ++s) {
    std::ifstream in(unavailable_log(out, s));
    std::string line;
    while (std::getline(in, line)) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) ++reasons[{line.substr(0, tab), line.substr(tab + 1)}];
    }
  }
  if (!reasons.empty()) {
    std::vector<std::pair<std::int64_t, std::pair<std::string, std::string>>> sorted;
    for (const auto& [key, n] : reasons) sorted.emplace_back(-n, key);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [n, key] : sorted) {
      j["unavailable_reasons"].push_back(
          {{"executor", key.first}, {"reason", key.second}, {"runs", -n}});
    }
  }
  // The slow workers that died, each with the case it was on (slow_death_log): rerun it with
  // `collfuzz gen --seed SEED --first INDEX --count 1`.
  {
    std::ifstream in(slow_death_log(out));
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      for (std::size_t at = 0;;) {
        const std::size_t tab = line.find('\t', at);
        f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
        if (tab == std::string::npos) break;
        at = tab + 1;
      }
      if (f.size() != 4) continue;
      j["worker_deaths"].push_back(
          {{"worker", f[0]}, {"case", f[1]}, {"executor", f[2]}, {"how", f[3]}});
      lines << "  slow worker " << f[0] << " died (" << f[3] << ") on case " << f[1]
            << (f[2] == "-" ? std::string(" between runs") : " running " + f[2])
            << "; rerun it: collfuzz gen --seed " << o.seed << " --first " << f[1]
            << " --count 1\n";
    }
  }
  write_file_atomically(out / "slow-pool.json", j.dump(2) + "\n");
  report = j;
  return lines.str();
}

}  // namespace collfuzz::campaign
