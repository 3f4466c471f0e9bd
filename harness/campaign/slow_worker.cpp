#include "harness/campaign/slow_worker.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/campaign/case_check.h"
#include "harness/campaign/findings_store.h"
#include "harness/campaign/slow_sampling.h"
#include "harness/core/errors.h"
#include "harness/runner/atomic_file.h"
#include "oracles/reference/reference.h"

namespace collfuzz::campaign {

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
  const std::int64_t every = std::max<std::int64_t>(1, o.offer_every);
  const std::uint64_t salt = sampling_salt("slow-pool");
  config.after_case = [&queue, profiles, every, salt](std::uint64_t index, const Case& c) {
    if (!sampled_case(index, salt, every)) return;
    std::uint64_t klass[2] = {0, 0};
    for (int p = 0; p < 2; ++p) {
      if (!((profiles >> p) & 1)) continue;
      try {
        klass[p] = behaviour_class(c, predict(c, Profile(p)).outcome);
      } catch (const std::exception&) {
        return;  // the fast worker reports the reference's exception itself
      }
    }
    offer_candidate(queue, index, klass[0], klass[1]);
  };
}

int run_slow_worker(const CampaignOptions& o, std::int64_t s,
                    const std::optional<std::chrono::steady_clock::time_point>& deadline,
                    const std::filesystem::path& findings, WorkerBoard& board, SlowQueue& queue) {
  CaseCheck check(worker_executors(o, true), o.level);
  std::vector<Profile> profiles;
  unsigned bits = 0;
  for (const auto& ex : check.executors()) {
    profiles.push_back(ex->profile());
    bits |= 1u << static_cast<int>(ex->profile());
  }
  FindingsStore store(findings);
  NoveltyPicker picker(splitmix64(o.seed ^ static_cast<std::uint64_t>(s)));
  SlowWorkerStats& stats = queue.workers[s];
  WorkerConfig config;
  config.seed = o.seed;
  config.worker = o.jobs + s;
  config.jobs = o.jobs;
  config.deadline = deadline;
  config.shrink = o.shrink;
  config.next_index = [&]() -> std::optional<std::uint64_t> {
    const std::optional<PickedCase> c = picker.pick(queue, bits);
    if (!c) return std::nullopt;
    picker.ran(*c, bits);
    stats.cases.fetch_add(1, std::memory_order_relaxed);
    for (std::size_t k = 0; k < profiles.size() && k < kSlowMaxExecutors; ++k)
      stats.classes[k].store(static_cast<std::int64_t>(picker.classes(profiles[k])));
    return c->index;
  };
  // No case limit and no saved state: the pool runs what the fast workers offer.
  Worker worker(config, check, &store, nullptr, &board.slots[o.jobs + s], &board.stop);
  worker.run(WorkerState{});
  return kExitOk;
}

std::string write_slow_pool_report(const std::filesystem::path& out, const CampaignOptions& o,
                                   const SlowQueue& queue) {
  const std::vector<std::string> names = slow_executor_names(o);
  nlohmann::json j;
  j["slow_jobs"] = o.slow_jobs;
  j["offer_every"] = o.offer_every;
  j["offered"] = queue.offered.load();
  j["overwritten"] = queue.overwritten.load();
  j["skipped"] = queue.skipped.load();
  std::ostringstream lines;
  for (std::int64_t s = 0; s < o.slow_jobs; ++s) {
    const SlowWorkerStats& st = queue.workers[s];
    nlohmann::json w;
    w["cases"] = st.cases.load();
    lines << "  slow worker " << s << ": " << st.cases.load() << " cases;";
    for (std::size_t k = 0; k < names.size() && k < kSlowMaxExecutors; ++k) {
      w["classes_covered"][names[k]] = st.classes[k].load();
      lines << " " << names[k] << " covered " << st.classes[k].load() << " classes;";
    }
    lines << "\n";
    j["workers"].push_back(w);
  }
  write_file_atomically(out / "slow-pool.json", j.dump(2) + "\n");
  return lines.str();
}

}  // namespace collfuzz::campaign
