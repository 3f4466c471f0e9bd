// The campaign's side of the slow executors' pool (slow_pool.h): which executors each kind of
// worker runs, the fast workers' offers, the body of a slow worker process, and the pool's
// report (slow-pool.json).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/campaign/campaign_options.h"
#include "harness/campaign/slow_pool.h"
#include "harness/campaign/worker.h"
#include "harness/campaign/worker_board.h"
#include "harness/executors/executor.h"

namespace collfuzz::campaign {

// Whether the campaign runs a slow pool: --slow-jobs > 0 and a slow executor is selected.
bool uses_slow_pool(const CampaignOptions& o);
// The slow executors' names, in the campaign's order.
std::vector<std::string> slow_executor_names(const CampaignOptions& o);
// The fast workers' executors, in worker_executors(o, false) order.
std::vector<std::string> fast_executor_names(const CampaignOptions& o);
// The executors a worker runs: with a pool, a fast worker runs the fast ones and a slow worker
// the slow ones; without one, a (fast) worker runs every executor.
std::vector<std::unique_ptr<Executor>> worker_executors(const CampaignOptions& o, bool slow);
// Bit p: profile p is some slow executor's.
unsigned slow_profiles(const CampaignOptions& o);

// Makes a fast worker offer one case in o.offer_every (by a hash of its index) to the pool, with
// the class of the reference's prediction for each slow profile; and cases of rare keys of the
// profiles only slow executors check (kProbeEvery, kRareOffers).
void offer_to_pool(WorkerConfig& config, const CampaignOptions& o, SlowQueue& queue);

// The niceness a slow worker adds to itself (its executors inherit it).
inline constexpr int kSlowPoolNice = 4;
// offer_to_pool's probe of the profiles only slow executors check: one case in kProbeEvery of
// those whose target names the profile is predicted for it, and offered while its key has been
// offered fewer than kRareOffers times.
inline constexpr std::int64_t kProbeEvery = 4;
inline constexpr std::int64_t kRareOffers = 8;

// The body of slow worker `s` (board slot o.jobs + s).
// OUT/slow-unavailable-N.tsv: slow worker N's unavailable runs, one "executor<TAB>reason" line
// each.
std::filesystem::path unavailable_log(const std::filesystem::path& out, std::int64_t worker);
// OUT/slow-stalls-N.tsv: slow worker N's runs of kStallSeconds or more, one
// "executor<TAB>case index<TAB>seconds<TAB>outcome kind<TAB>reason" line each.
std::filesystem::path stall_log(const std::filesystem::path& out, std::int64_t worker);
// OUT/slow-deaths.tsv: the slow workers that died (not stopped by the campaign), one
// "worker<TAB>case index<TAB>executor it was running ('-' between runs)<TAB>how it ended" line
// each, appended by the supervisor before it starts the replacement.
std::filesystem::path slow_death_log(const std::filesystem::path& out);
// Appends slow worker `s`'s death to slow_death_log: the case it was on (its board slot's, or
// the run's in flight) and the executor running it, then marks the worker idle for its
// replacement. `status`: the waitpid status.
void record_slow_worker_death(const std::filesystem::path& out, const CampaignOptions& o,
                              SlowQueue& queue, std::int64_t s, std::uint64_t slot_index,
                              int status);

int run_slow_worker(const CampaignOptions& o, std::int64_t s,
                    const std::optional<std::chrono::steady_clock::time_point>& deadline,
                    const std::filesystem::path& findings, WorkerBoard& board, SlowQueue& queue);

// What the slow pool has been waiting on for `after_seconds` or more, for the progress line:
// "jax-interpret: case 34,001 for 40 s" ("" when nothing).
std::string slow_pool_waiting(const CampaignOptions& o, const SlowQueue& queue,
                              double after_seconds);

// slow-pool.json (also set in `report`: the summary's "slow_pool", written with the summary),
// and lines for the end of the run: per slow worker and executor its runs, the classes it
// covered, its timeouts, stalls, longest run, unavailable runs and crashes; the queue's counters.
std::string write_slow_pool_report(const std::filesystem::path& out, const CampaignOptions& o,
                                   const SlowQueue& queue, nlohmann::json& report);

}  // namespace collfuzz::campaign
