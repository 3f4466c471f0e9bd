#include "harness/campaign/worker.h"

#include <thread>

#include "generators/case_stream.h"
#include "harness/campaign/finding_report.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::campaign {
namespace {

bool has_signature(const std::vector<Mismatch>& ms, const std::string& signature) {
  for (const auto& m : ms) {
    if (m.signature == signature) return true;
  }
  return false;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Worker::Worker(WorkerConfig config, CaseCheck& check, FindingsStore* store,
               const CampaignDirectory* dir, WorkerSlot* slot, const std::atomic<int>* stop)
    : config_(std::move(config)),
      check_(check),
      store_(store),
      dir_(dir),
      slot_(slot),
      stop_(stop) {
  if (slot_) {
    check_.set_phase_word(&slot_->phase);
    check_.set_tallies(slot_->executors);
  }
}

void Worker::publish_rules(const generators::RuleCoverage& coverage) {
  if (!slot_) return;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  for (std::size_t r = 0; r < generators::RuleCoverage::kRules; ++r) {
    const auto id = static_cast<RuleId>(r);
    if (coverage.fired(id, Profile::kMosaic) + coverage.fired(id, Profile::kInterpret) == 0)
      continue;
    (r < 64 ? lo : hi) |= std::uint64_t{1} << (r % 64);
  }
  slot_->rules_lo.store(lo, std::memory_order_relaxed);
  slot_->rules_hi.store(hi, std::memory_order_relaxed);
  slot_->profiles.store(coverage.profile_bits(), std::memory_order_relaxed);
}

void Worker::report(const std::string& signature, std::uint64_t index, const Case& c,
                    double seconds, const std::optional<Confirmation>& confirmation) {
  ++findings_;
  if (slot_) slot_->findings.fetch_add(1, std::memory_order_relaxed);
  FindingEvent ev;
  ev.signature = signature;
  ev.index = index;
  ev.seconds_to_detection = seconds;
  ev.original = case_size(c);
  const FoundAt at{c.name, config_.seed, index, config_.worker, seconds};

  // Reported at once, as found: a kill during shrinking keeps it.
  Case reported = c;
  reported.notes = "collfuzz fuzz finding " + signature + " (as found; shrinking)";
  const auto with_confirmation = [&](nlohmann::json j) {
    if (confirmation) j["confirmation"] = confirmation->to_json();
    return j;
  };
  if (store_) {
    store_->write(signature, reported,
                  with_confirmation(finding_report(signature, at, check_.full(c), ev.original,
                                                   ev.original, false, nullptr)));
    ev.case_file = store_->dir() / (FindingsStore::slug(signature) + ".json");
  }
  if (config_.shrink) {
    const auto t0 = std::chrono::steady_clock::now();
    if (slot_) slot_->phase.store(kShrink, std::memory_order_relaxed);
    // The executor the signature names (its last field); the others need not run per candidate.
    const std::string executor = signature.substr(signature.rfind(':') + 1);
    bool known = false;
    for (const auto& name : check_.executor_names()) known = known || name == executor;
    CaseShrinker shrinker(
        [&](const Case& cand) {
          if (slot_) slot_->heartbeat.fetch_add(1, std::memory_order_relaxed);
          // A nondeterministic executor's candidate keeps the signature only when it repeats
          // (never on a single run).
          const int runs = confirmation ? 2 : 1;
          for (int r = 0; r < runs; ++r) {
            if (!has_signature(
                    check_.mismatches(cand, nullptr, std::nullopt, known ? &executor : nullptr),
                    signature))
              return false;
          }
          return true;
        },
        config_.shrink_limits);
    Case shrunk = shrinker.shrink(generators::generate_shrinkable(config_.seed, index));
    ev.shrink_seconds = since(t0);
    ev.shrunk = case_size(shrunk);
    shrunk.name = c.name + "-shrunk";
    shrunk.notes = "collfuzz fuzz finding " + signature + ", shrunk from " + c.name + " (" +
                   std::to_string(ev.original.ops) + " ops, " + std::to_string(ev.original.ctas) +
                   " CTAs -> " + std::to_string(ev.shrunk.ops) + " ops, " +
                   std::to_string(ev.shrunk.ctas) + " CTAs); every executor's outcome is in " +
                   FindingsStore::slug(signature) + ".outcomes.json";
    if (store_) {
      store_->write(
          signature, shrunk,
          with_confirmation(finding_report(signature, at, check_.full(shrunk), ev.original,
                                           ev.shrunk, true, &shrinker.stats())));
    }
  } else {
    ev.shrunk = ev.original;
  }
  if (on_finding) on_finding(ev);
}

void Worker::record_known(const std::string& signature, std::uint64_t index, const Case& c,
                          const KnownJaxBug* bug) {
  if (!store_) return;
  if (!known_store_) known_store_.emplace(store_->dir().parent_path() / "known");
  if (!known_store_->claim(signature)) return;
  Case recorded = c;
  recorded.notes =
      "collfuzz fuzz: " + (bug ? "known JAX bug " + bug->id + ", " + signature
                               : "known divergence " + signature + " (listed in the baseline)");
  nlohmann::json report{
      {"signature", signature},
      {"known", true},
      {"reason", bug ? bug->reason() : config_.known->at(signature)},
      {"found",
       {{"case", c.name}, {"seed", config_.seed}, {"index", index}, {"worker", config_.worker}}}};
  if (bug) {
    report["known_bug"] = {{"id", bug->id},
                           {"summary", bug->summary},
                           {"jax", bug->jax},
                           {"case", bug->corpus_case},
                           {"link", bug->link}};
  }
  known_store_->write(signature, recorded, report);
}

WorkerState Worker::run(WorkerState state) {
  started_ = std::chrono::steady_clock::now();
  auto last_save = started_;
  double saved_seconds = state.seconds;
  const auto jobs = static_cast<std::uint64_t>(config_.jobs);
  std::int64_t since_publish = 0;
  while (true) {
    if (stop_ && stop_->load(std::memory_order_relaxed)) break;
    if (config_.case_limit > 0 &&
        state.next_index >= static_cast<std::uint64_t>(config_.case_limit))
      break;
    const auto now = std::chrono::steady_clock::now();
    if (config_.deadline && now >= *config_.deadline) break;
    if (config_.stop_after_findings > 0 && findings_ >= config_.stop_after_findings) break;

    std::uint64_t index = config_.shard.global(state.next_index);
    if (config_.next_index) {
      const std::optional<std::uint64_t> queued = config_.next_index();
      if (!queued) {
        if (slot_) slot_->heartbeat.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      index = *queued;
    }
    if (slot_) {
      slot_->current_index.store(index, std::memory_order_relaxed);
      slot_->phase.store(kGenerate, std::memory_order_relaxed);
    }
    const Case c = generators::generate_case(config_.seed, index);
    // A slow pool worker runs the executor it picked the case for (they were sampled already).
    const std::vector<Mismatch> ms =
        check_.mismatches(c, slot_ ? &slot_->coverage : &state.coverage,
                          config_.next_index ? std::nullopt : std::optional<std::uint64_t>(index),
                          config_.only_executor, true);
    if (config_.after_case)
      config_.after_case(index, c, slot_ ? &slot_->coverage : &state.coverage);
    for (const auto& [reason, n] : check_.take_unavailable()) state.unavailable[reason] += n;
    for (const auto& [executor, n] : check_.take_runs()) state.runs[executor] += n;
    const double t = since(started_);
    for (const auto& m : ms) {
      ++state.signatures[m.signature];
      // A signature found flaky 3 times in this worker is only counted from then on.
      if (flaky_times_[m.signature] >= 3) continue;
      if (config_.known && config_.known->count(m.signature)) {
        record_known(m.signature, index, c);
        continue;
      }
      if (config_.known_bugs) {
        if (const KnownJaxBug* bug =
                config_.known_bugs->match(signature_executor(m.signature), m.detail)) {
          record_known(m.signature, index, c, bug);
          continue;
        }
      }
      if (store_ ? store_->claim(m.signature) : state.signatures[m.signature] == 1) {
        std::optional<Confirmation> confirmation;
        const std::string executor = signature_executor(m.signature);
        if (needs_confirmation(executor, c, config_.confirm)) {
          if (slot_) slot_->phase.store(kShrink, std::memory_order_relaxed);
          confirmation = confirm(check_, c, m.signature, executor, config_.confirm.repeats, [&] {
            if (slot_) slot_->heartbeat.fetch_add(1, std::memory_order_relaxed);
          });
          if (confirmation->flaky()) {
            // Not a finding: recorded apart; a later occurrence may still confirm it.
            if (store_) {
              store_->unclaim(m.signature);
              record_flaky(store_->dir().parent_path(), m.signature, config_.seed, index, c,
                           *confirmation);
            }
            ++flaky_;
            ++flaky_times_[m.signature];
            continue;
          }
        }
        try {
          report(m.signature, index, c, t, confirmation);
        } catch (const DiskFullError&) {
          // A claim without its finding would block the signature for good.
          if (store_ && !std::filesystem::exists(
                            store_->dir() / (FindingsStore::slug(m.signature) + ".outcomes.json")))
            store_->unclaim(m.signature);
          throw;
        }
      }
    }
    if (!config_.next_index) state.next_index += jobs;
    ++state.cases;
    if (slot_) {
      slot_->cases.fetch_add(1, std::memory_order_relaxed);
      slot_->total_cases.store(state.cases, std::memory_order_relaxed);
      slot_->heartbeat.fetch_add(1, std::memory_order_relaxed);
    }
    if (++since_publish >= 256) {
      since_publish = 0;
      publish_rules(slot_ ? slot_->coverage : state.coverage);
    }
    if (dir_ && now - last_save >= std::chrono::seconds(1)) {
      state.seconds = saved_seconds + since(started_);
      if (slot_) state.coverage = slot_->coverage;
      dir_->save_worker(state);
      if (slot_) state.coverage = slot_->coverage;
      last_save = now;
    }
  }
  state.seconds = saved_seconds + since(started_);
  publish_rules(slot_ ? slot_->coverage : state.coverage);
  if (slot_) state.coverage = slot_->coverage;
  if (dir_) dir_->save_worker(state);
  return state;
}

}  // namespace collfuzz::campaign
