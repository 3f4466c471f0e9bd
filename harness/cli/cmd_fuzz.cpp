// collfuzz fuzz: a fuzzing campaign (harness/campaign): generated cases run on the reference and
// on every executor, disagreements deduplicated by signature, shrunk and written as case files;
// summary.md and summary.json at the end. Exit 1 if any finding, or if no requested executor
// can compare anything here.
#include <unistd.h>
#include <algorithm>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "generators/case_stream.h"
#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_lock.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/campaign_summary.h"
#include "harness/campaign/executor_releases.h"
#include "harness/cli/commands.h"
#include "harness/core/bounded_json_reader.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/report/html_report.h"
#include "harness/runner/baseline.h"
#include "harness/runner/baseline_lookup.h"
#include "harness/runner/known_jax_bugs.h"

namespace collfuzz::cli {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "reference" : out;
}

// The executors of --executors, less the reference (the expected side of every comparison).
std::vector<std::string> requested_executors(const Flags& flags) {
  std::vector<std::string> out;
  for (auto& name : parse_executor_list(flags.executors)) {
    if (name != "reference") out.push_back(name);
  }
  return out;
}

// A resumed campaign keeps what defines it (its seed, executors, jobs, level, shrinking): a flag
// that asks for another value is refused, never ignored.
// --replay-rates FILE: per executor, the compared cases of a `collfuzz replay --json-out` file
// over their seconds.
std::map<std::string, double> load_replay_rates(const std::string& file) {
  nlohmann::json j;
  try {
    j = load_json_file(file);
  } catch (const std::exception& e) {
    throw InputError("--replay-rates", file + ": " + e.what());
  }
  if (!j.is_array()) throw InputError("--replay-rates", file + ": not a `replay --json-out` array");
  std::map<std::string, std::pair<std::int64_t, double>> sums;
  for (const auto& c : j) {
    if (!c.is_object() || !c.contains("executor") || !c["executor"].is_string() ||
        !c.contains("seconds") || !c["seconds"].is_number() || !c.contains("status") ||
        !c["status"].is_string())
      throw InputError("--replay-rates", file + ": an entry without executor, status or seconds");
    const std::string status = c["status"].get<std::string>();
    if (status != "pass" && status != "fail") continue;  // skipped: not run
    auto& [n, seconds] = sums[c["executor"].get<std::string>()];
    ++n;
    seconds += c["seconds"].get<double>();
  }
  std::map<std::string, double> rates;
  for (const auto& [executor, sum] : sums)
    if (sum.second > 0) rates[executor] = static_cast<double>(sum.first) / sum.second;
  return rates;
}

void refuse_changes(const Flags& flags, const campaign::CampaignOptions& o) {
  const std::string where = terminal_text(o.out.string());
  const auto refuse = [&](const char* flag, const std::string& kept) {
    throw InputError(flag, "the campaign in " + where + " was started with " + flag + " " + kept +
                               "; a resumed campaign keeps it (start a new --out to change it)");
  };
  if (flags.was_given("--seed") && flags.seed != o.seed) refuse("--seed", std::to_string(o.seed));
  if (flags.was_given("--jobs") && flags.jobs != o.jobs) refuse("--jobs", std::to_string(o.jobs));
  if (flags.was_given("--executors")) {
    auto asked = requested_executors(flags);
    auto kept = o.executors;
    std::sort(asked.begin(), asked.end());
    std::sort(kept.begin(), kept.end());
    if (asked != kept) refuse("--executors", join(o.executors));
  }
  if (flags.was_given("--level") && parse_level_flag(flags.level) != o.level) {
    refuse("--level", o.level == DiagnosticLevel::kVerdict ? "verdict"
                      : o.level == DiagnosticLevel::kRule  ? "rule"
                                                           : "message");
  }
  if (flags.was_given("--no-shrink") && o.shrink) refuse("--no-shrink", "shrinking on");
  if (flags.was_given("--jax") && parse_jax_flag(flags.jax) != o.jax)
    refuse("--jax", o.jax ? to_string(*o.jax) : "(none)");
}

// --resume: the campaign as it was started, with this session's budget. --seconds and --cases
// give this session's budget (on top of what the campaign has spent); without either, the
// campaign goes on to the budget it was started with.
campaign::CampaignOptions resumed_options(const Flags& flags,
                                          const campaign::CampaignDirectory& dir) {
  if (!dir.has_campaign())
    throw InputError("--resume", terminal_text(flags.out) + " holds no campaign to resume");
  campaign::CampaignOptions o = dir.load_options();
  refuse_changes(flags, o);
  const campaign::CampaignTotals spent = campaign::merge_worker_states(dir, o.jobs);
  std::cout << "resuming the campaign in " << terminal_text(flags.out) << " (seed " << o.seed
            << ", " << o.jobs << " jobs): " << spent.cases << " cases and "
            << static_cast<std::int64_t>(spent.seconds) << " s so far; ";
  const bool seconds_given = flags.was_given("--seconds");
  const bool cases_given = flags.was_given("--cases");
  if (seconds_given || cases_given) {
    o.seconds = seconds_given && flags.seconds > 0 ? spent.seconds + flags.seconds : 0;
    o.cases = cases_given && flags.cases > 0 ? spent.cases + flags.cases : 0;
    std::cout << "this session's budget: ";
    if (seconds_given && flags.seconds > 0) std::cout << flags.seconds << " s ";
    if (cases_given && flags.cases > 0) std::cout << flags.cases << " more cases ";
    if (o.seconds <= 0 && o.cases <= 0) std::cout << "none (Ctrl-C stops it) ";
    std::cout << "\n";
  } else if ((o.seconds > 0 && spent.seconds >= o.seconds) ||
             (o.cases > 0 && spent.cases >= o.cases)) {
    std::cout << "its budget is spent: --seconds S or --cases N gives this session more\n";
  } else {
    std::cout << "going on to the budget it was started with\n";
  }
  return o;
}

}  // namespace

int cmd_fuzz(const Flags& flags) {
  campaign::CampaignOptions o;
  const campaign::CampaignDirectory dir(flags.out);
  // A campaign running on this --out (or its orphaned workers) is named before anything else.
  campaign::CampaignLock::check_free(flags.out);
  // The explicit flag wins over the engine's environment; a bad value exits 2 naming its source.
  const campaign::Shard shard = campaign::resolve_shard(flags.shard);
  if (flags.resume) {
    o = resumed_options(flags, dir);
    if (!flags.shard.empty() && (shard.index != o.shard.index || shard.count != o.shard.count))
      throw InputError("--shard", "the campaign in " + terminal_text(flags.out) + " runs shard " +
                                      o.shard.text());
  } else {
    if (dir.has_campaign()) {
      throw InputError("--out", terminal_text(flags.out) +
                                    " already holds a campaign: --resume continues it, or choose "
                                    "another --out");
    }
    o.seed = flags.seed;
    o.seconds = flags.seconds;
    o.cases = flags.cases;
    o.jobs = flags.jobs;
    o.shrink = !flags.no_shrink;
    o.shard = shard;
    o.level = parse_level_flag(flags.level);
    o.jax = parse_jax_flag(flags.jax);
    o.executors = flags.executors.empty() ? campaign::available_executors(executor_options(flags))
                                          : requested_executors(flags);
  }
  o.out = flags.out;
  o.slow_jobs = flags.slow_jobs;
  o.run_scripts = !flags.no_script_runs;
  if (flags.confirm < 0 || flags.confirm > 100)
    throw InputError("--confirm", "expected 0 to 100 reruns");
  o.confirm = flags.confirm;
  if (!flags.confirm_executors.empty())
    o.confirm_executors = parse_executor_list(flags.confirm_executors);
  o.executor_options = executor_options(flags);
  o.allow_unavailable = flags.allow_unavailable;
  // Known divergences: counted, not findings (as replay does; the same default file).
  // The first line a campaign prints says which baseline it took, or that it found none.
  const BaselineLocation baseline_at = find_known_divergences(flags.baseline);
  std::cout << baseline_location_line(baseline_at) << "\n";
  o.baseline = baseline_at.path;
  if (!o.baseline.empty()) {
    const Baseline baseline = Baseline::load(o.baseline);
    for (const auto& d : baseline.all()) o.known.emplace(d.signature, d.reason);
  }
  // Known JAX bugs (ci/known-jax-bugs.json): matched by executor and message.
  const BaselineLocation bugs_at =
      find_ci_file("known-jax-bugs.json", flags.known_bugs, "--known-bugs");
  std::cout << known_bugs_location_line(bugs_at) << "\n";
  o.known_bugs_file = bugs_at.path;
  if (!flags.replay_rates.empty()) o.replay_rates = load_replay_rates(flags.replay_rates);
  if (!bugs_at.path.empty())
    o.known_bugs = std::make_shared<const KnownJaxBugs>(KnownJaxBugs::load(bugs_at.path));

  // Nothing compared, known at once: every executor asked for fails the cheap check here (a GPU
  // CI job that lost its GPU). One that passes it and still compares nothing (a Python without
  // JAX) is found at the campaign's end, from its runs. Only the reference, asked for alone, is a
  // campaign of its own.
  const auto unavailable = campaign::unavailable_executors(o.executors, o.executor_options);
  for (const auto& u : unavailable) {
    std::cout << "note: " << u.executor << " is unavailable here: " << terminal_text(u.reason)
              << "\n";
  }
  if (!o.executors.empty() && unavailable.size() == o.executors.size()) {
    std::cout << "collfuzz fuzz: nothing would be compared: every requested executor is "
                 "unavailable here. --allow-unavailable runs the campaign anyway (for local use)\n";
    if (!flags.allow_unavailable) return kExitMismatch;
  }

  // --jax V: every generated case is pinned to V and judged by V's reference (forked workers
  // inherit the pin); a JAX executor running another release is a version mismatch.
  generators::pin_generated_jax(o.jax);
  if (o.jax) {
    for (const auto& off :
         campaign::executors_off_release(o.executors, o.executor_options, *o.jax)) {
      std::cout << "note: " << off.executor << " runs JAX " << terminal_text(off.jax) << ", not "
                << to_string(*o.jax) << ": its results are version mismatches, not "
                << "compared (--python .venv-jax-" << to_string(*o.jax) << "/bin/python)\n";
    }
  }

  std::cout << "collfuzz fuzz: seed " << o.seed << ", reference vs ";
  if (o.executors.empty()) std::cout << "(no executor available: only the reference runs)";
  for (std::size_t i = 0; i < o.executors.size(); ++i)
    std::cout << (i ? "," : "") << o.executors[i];
  if (o.jax) std::cout << ", judged by JAX " << to_string(*o.jax);
  if (o.shard.sharded()) std::cout << ", shard " << o.shard.text() << " (" << o.shard.source << ")";
  std::cout << ", " << o.jobs << " worker process" << (o.jobs == 1 ? "" : "es")
            << (flags.resume ? ", campaign budget " : ", budget ");
  if (o.seconds > 0) std::cout << o.seconds << " s ";
  if (o.cases > 0) std::cout << o.cases << " cases ";
  if (o.seconds <= 0 && o.cases <= 0) std::cout << "none (Ctrl-C stops it) ";
  std::cout << "-> " << terminal_text(o.out.string()) << "\n" << std::flush;
  const int rc = campaign::Campaign(o).run(std::cout, ::isatty(STDOUT_FILENO) != 0);
  report::write_html_report(o.out, o.out / "report.html");  // linked from summary.md
  return rc;
}

}  // namespace collfuzz::cli
