#include "harness/campaign/campaign_summary.h"

#include <unistd.h>
#include <algorithm>

#include <climits>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "harness/campaign/slow_pool.h"
#include "harness/core/allocator.h"
#include "harness/core/build_info.h"
#include "harness/core/jax_version.h"
#include "harness/runner/atomic_file.h"
#include "oracles/reference/rules.h"

namespace collfuzz::campaign {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Per real executor (JAX, cuda: is_slow_executor) of the campaign: the rules its profile can
// fire (rules.def's profiles, in the campaign's JAX release); of those, the ones in its reach (a
// rule of a stage the executor does not run, Executor::observes_stage, such as a compile error
// for jax-lower, can never come back from it: out of reach, listed apart); and which of the
// rules in reach it received a case for in this run (its tally: a case whose predicted rule it
// is reached the executor and was compared); a warning for each executor that missed some.
nlohmann::json rules_sent_to_real_executors(const CampaignOptions& o, const CampaignTotals& t,
                                            nlohmann::json& warnings) {
  const JaxVersion release = o.jax.value_or(kDefaultJaxVersion);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& name : o.executors) {
    if (!is_slow_executor(name)) continue;
    const auto it = t.slow_profiles.find(name);
    if (it == t.slow_profiles.end()) continue;  // its profile unknown: nothing to say
    const Profile profile = it->second;
    const auto unobserved = t.unobserved_stages.find(name);
    const ProgressSnapshot::ExecutorProgress* tally = nullptr;
    for (const auto& e : t.executor_tallies) {
      if (e.name == name) tally = &e;
    }
    nlohmann::json never = nlohmann::json::array();
    nlohmann::json out_of_reach = nlohmann::json::array();
    std::int64_t can = 0;
    std::int64_t in_reach = 0;
    std::int64_t received = 0;
    for (const Rule& r : all_rules()) {
      const bool fires = profile == Profile::kMosaic ? r.profiles != RuleProfiles::kInterpretOnly
                                                     : r.profiles != RuleProfiles::kMosaicOnly;
      if (!fires || !rule_holds(r, release)) continue;
      ++can;
      if (unobserved != t.unobserved_stages.end() &&
          unobserved->second.count(std::string(to_string(r.stage)))) {
        out_of_reach.push_back(std::string(r.name));
        continue;
      }
      ++in_reach;
      if (tally && tally->reached(static_cast<std::size_t>(r.id))) {
        ++received;
      } else {
        never.push_back(std::string(r.name));
      }
    }
    const auto ratio = [](std::int64_t a, std::int64_t b) {
      return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 1.0;
    };
    const double share = ratio(received, in_reach);
    out[name] = {{"profile", to_string(profile)},
                 {"compared", tally ? tally->compared : 0},
                 {"rules_can_fire", can},
                 {"rules_in_reach", in_reach},
                 {"rules_received", received},
                 {"share", share},
                 {"share_of_profile", ratio(received, can)},
                 {"never_received", never},
                 {"out_of_reach", out_of_reach}};
    if (!never.empty())
      warnings.push_back(name + " never received a case for " + std::to_string(never.size()) +
                         " of the " + std::to_string(in_reach) + " rules in its reach that its " +
                         "profile (" + to_string(profile) + ") can fire (" +
                         std::to_string(static_cast<int>(share * 100)) + " % received)");
  }
  return out;
}

// Warnings: an executor that ran fewer than kHealthMinCases cases (the fast workers' runs and
// the slow pool's), a profile for which the reference predicted fewer (no executor checks it, or
// too few cases reached one that does).
nlohmann::json health_checks(const CampaignOptions& o, const CampaignTotals& t) {
  std::map<std::string, std::int64_t> runs = t.runs;
  std::map<std::string, std::int64_t> slow_runs;  // not in the fast workers' coverage
  if (t.slow_pool.is_object() && t.slow_pool.contains("workers")) {
    for (const auto& w : t.slow_pool["workers"]) {
      if (!w.contains("executors")) continue;
      for (const auto& [name, e] : w["executors"].items()) {
        runs[name] += e.value("runs", std::int64_t{0});
        slow_runs[name] += e.value("runs", std::int64_t{0});
      }
    }
  }
  std::map<Profile, std::int64_t> profile_cases = {
      {Profile::kMosaic, t.coverage.outcomes(Profile::kMosaic)},
      {Profile::kInterpret, t.coverage.outcomes(Profile::kInterpret)}};
  for (const auto& [name, n] : slow_runs) {
    const auto it = t.slow_profiles.find(name);
    if (it != t.slow_profiles.end()) profile_cases[it->second] += n;
  }
  nlohmann::json executor_runs = nlohmann::json::object();
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& name : o.executors) {
    const std::int64_t n = runs.count(name) ? runs[name] : 0;
    executor_runs[name] = n;
    if (n < kHealthMinCases)
      warnings.push_back(name + " ran " + std::to_string(n) + " cases (fewer than " +
                         std::to_string(kHealthMinCases) + ")");
  }
  for (const Profile p : {Profile::kMosaic, Profile::kInterpret}) {
    const std::int64_t n = profile_cases[p];
    if (n < kHealthMinCases)
      warnings.push_back(std::string("the ") + to_string(p) + " profile was checked on " +
                         std::to_string(n) + " cases (fewer than " +
                         std::to_string(kHealthMinCases) + "): no executor of the campaign runs " +
                         "it, or too few cases reached one");
  }
  nlohmann::json rules_sent = rules_sent_to_real_executors(o, t, warnings);
  return {{"min_cases", kHealthMinCases},
          {"executor_runs", executor_runs},
          {"rules_sent", rules_sent},
          {"warnings", warnings}};
}

std::string health_markdown(const nlohmann::json& s) {
  if (!s.contains("health") || !s["health"].is_object()) return {};
  const auto& h = s["health"];
  std::string md = "\n## Health checks\n\n| executor | cases run |\n|---|---|\n";
  for (const auto& [name, n] : h["executor_runs"].items())
    md += "| " + name + " | " + n.dump() + " |\n";
  if (h.contains("rules_sent") && !h["rules_sent"].empty()) {
    md +=
        "\nRules sent to each real executor in this run: of the rules its profile can fire and "
        "its stages can show (in reach), those it received a case for (the case's predicted "
        "rule).\n\n| executor | profile | cases compared | rules received | share | never "
        "received | out of reach |\n|---|---|---|---|---|---|---|\n";
    for (const auto& [name, r] : h["rules_sent"].items()) {
      std::string never;
      for (const auto& id : r["never_received"])
        never += (never.empty() ? "`" : ", `") + id.get<std::string>() + "`";
      std::string beyond;
      for (const auto& id : r.value("out_of_reach", nlohmann::json::array()))
        beyond += (beyond.empty() ? "`" : ", `") + id.get<std::string>() + "`";
      md += "| " + name + " | " + r["profile"].get<std::string>() + " | " + r["compared"].dump() +
            " | " + r["rules_received"].dump() + " of " +
            r.value("rules_in_reach", r["rules_can_fire"]).dump() + " | " +
            fixed(100 * r["share"].get<double>(), 0) + " % | " + (never.empty() ? "-" : never) +
            " | " + (beyond.empty() ? "-" : beyond) + " |\n";
    }
  }
  md += "\n";
  if (h["warnings"].empty()) md += "No warning.\n";
  for (const auto& w : h["warnings"]) md += "- **warning**: " + w.get<std::string>() + "\n";
  return md;
}

std::string unavailable_markdown(const nlohmann::json& s) {
  if (!s.contains("unavailable") || !s["unavailable"].is_object() || s["unavailable"].empty())
    return {};
  std::string md =
      "\n## Unavailable runs (fast workers)\n\nRuns an executor could not do, per reason (numbers "
      "as N); never counted as agreeing.\n\n| executor | reason | runs |\n|---|---|---|\n";
  for (const auto& [executor, reasons] : s["unavailable"].items()) {
    for (const auto& [reason, n] : reasons.items())
      md += "| " + executor + " | " + reason + " | " + n.dump() + " |\n";
  }
  return md;
}

std::string known_markdown(const nlohmann::json& s) {
  if (!s.contains("known") || !s["known"].is_array() || s["known"].empty()) return {};
  std::string md =
      "\n## Known divergences and known JAX bugs (baseline " + s.value("baseline", std::string()) +
      ", known JAX bugs " + s.value("known_bugs_file", std::string()) +
      "; not findings)\n\n| signature | occurrences | first case | reason |\n|---|---|---|---|\n";
  for (const auto& k : s["known"]) {
    const std::string file = k.value("case_file", std::string());
    md += "| `" + k.value("signature", std::string()) + "` | " + k["occurrences"].dump() + " | [" +
          file + "](" + file + ") | " + k.value("reason", std::string()) + " |\n";
  }
  return md;
}

}  // namespace

void set_reproduced(nlohmann::json& entry, const nlohmann::json& reproduced) {
  if (reproduced.is_object()) {
    entry["reproduced"] = reproduced.value("reproduced", std::string("error"));
    entry["reproduced_why"] = reproduced.value("why", std::string());
  } else {
    entry["reproduced"] = "not run";
    entry["reproduced_why"] = "no result was recorded (the campaign stopped before it ran)";
  }
}

namespace {

// Each finding's script, run once by the campaign (finding_repro_run.h): the counts, then one
// line per finding with why.
std::string reproduced_markdown(const nlohmann::json& s) {
  std::map<std::string, int> counts;
  std::string lines;
  for (const auto& f : s["findings"]) {
    if (!f.contains("reproduced")) continue;
    const std::string status = f.value("reproduced", std::string());
    ++counts[status];
    lines += "- `" + f.value("signature", std::string()) + "`: **" + status + "** (" +
             f.value("reproduced_why", std::string()) + ")\n";
  }
  if (counts.empty()) return {};
  std::string total;
  for (const auto& [status, n] : counts)
    total += (total.empty() ? "" : ", ") + status + " " + std::to_string(n);
  return "## Does each finding's script reproduce it?\n\nEach finding's `SIGNATURE.py`, run once "
         "by the campaign (yes: its assertion failed, JAX disagrees with collfuzz's reference; "
         "no: it passed; docs/fuzzing.md): " +
         total + ".\n\n" + lines + "\n";
}

std::string flaky_markdown(const nlohmann::json& s) {
  if (!s.contains("flaky") || !s["flaky"].is_array() || s["flaky"].empty()) return {};
  std::map<std::string, std::vector<const nlohmann::json*>> by_signature;
  for (const auto& r : s["flaky"]) by_signature[r.value("signature", std::string())].push_back(&r);
  std::string md =
      "\n## Flaky disagreements (not findings)\n\n"
      "A disagreement of a nondeterministic executor that did not repeat on every rerun. Each "
      "record is under flaky/.\n\n| signature | occurrences | reruns that repeated it "
      "|\n|---|---|---|\n";
  for (const auto& [signature, records] : by_signature) {
    std::string counts;
    for (const auto* r : records) {
      const auto& c = (*r)["confirmation"];
      counts += (counts.empty() ? "" : ", ") + c.value("repeated", nlohmann::json(0)).dump() + "/" +
                c.value("reruns", nlohmann::json(0)).dump();
    }
    md += "| `" + signature + "` | " + std::to_string(records.size()) + " | " + counts + " |\n";
  }
  return md;
}

std::string slow_pool_markdown(const nlohmann::json& s) {
  if (!s.contains("slow_pool") || !s["slow_pool"].is_object()) return {};
  const auto& p = s["slow_pool"];
  const auto n = p.value("slow_jobs", std::int64_t{0});
  std::string md =
      "\n## Slow executors (pool of " + std::to_string(n) + " worker process" +
      (n == 1 ? "" : "es") + ")\n\nA stall is a run of " +
      p.value("stall_seconds", nlohmann::json(0)).dump() +
      " s or more; classes are the reference's predicted behaviour classes the "
      "executor ran (novelty-ranked sampling). cases/s is over the worker's life; "
      "own cases/s over the seconds the executor's runs took (the rate a replay of "
      "the same cases would have); replay cases/s that of the corpus replay given "
      "with --replay-rates; share is its part of the worker's time.\n\n"
      "| worker | executor | runs | cases/s | own cases/s | replay cases/s | share | "
      "classes covered | timeouts | stalls | longest run (s) | unavailable | crashes |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::size_t w = 0;
  for (const auto& worker : p.value("workers", nlohmann::json::array())) {
    if (worker.contains("executors") && worker["executors"].is_object()) {
      for (const auto& [name, e] : worker["executors"].items()) {
        md += "| " + std::to_string(w) + " | " + name + " | " + e["runs"].dump() + " | " +
              fixed(e.value("cases_per_second", 0.0), 2) + " | " +
              fixed(e.value("own_cases_per_second", 0.0), 2) + " | " +
              (e.contains("replay_cases_per_second")
                   ? fixed(e.value("replay_cases_per_second", 0.0), 2)
                   : std::string("-")) +
              " | " + fixed(100.0 * e.value("time_share", 0.0), 0) + " % | " +
              e["classes_covered"].dump() + " | " + e["timeouts"].dump() + " | " +
              e["stalls"].dump() + " | " + e["longest_run_seconds"].dump() + " | " +
              e["unavailable"].dump() + " | " + e["crashes"].dump() + " |\n";
      }
    }
    ++w;
  }
  md += "\nQueue: " + p.value("offered", nlohmann::json(0)).dump() + " cases offered, " +
        p.value("overwritten", nlohmann::json(0)).dump() + " overwritten by newer ones, " +
        p.value("skipped", nlohmann::json(0)).dump() + " skipped on a busy slot, " +
        p.value("not_offered", nlohmann::json(0)).dump() +
        " not offered (the queue was half full: not even classified).\n";
  // The slow workers that died, each with the case it was on (slow-deaths.tsv).
  const std::string s_seed = s.contains("seed") ? s["seed"].dump() : std::string("SEED");
  for (const auto& d : p.value("worker_deaths", nlohmann::json::array())) {
    const std::string c = d.value("case", std::string());
    const std::string e = d.value("executor", std::string());
    md += "\nSlow worker " + d.value("worker", std::string()) + " died (" +
          d.value("how", std::string()) + ") on case " + c +
          (e == "-" ? std::string(" between runs") : " running " + e) +
          ": rerun it with `collfuzz gen --seed " + s_seed + " --first " + c +
          " --count 1 > case.json`.\n";
  }
  // Why the slow executors marked cases unavailable (for jax-ir: the ops and PTX it does not
  // model).
  const auto reasons = p.value("unavailable_reasons", nlohmann::json::array());
  if (!reasons.empty()) {
    md += "\nUnavailable runs by reason:\n\n| executor | reason | runs |\n|---|---|---|\n";
    for (const auto& r : reasons) {
      md += "| " + r.value("executor", std::string()) + " | " + r.value("reason", std::string()) +
            " | " + r.value("runs", nlohmann::json(0)).dump() + " |\n";
    }
  }
  return md;
}

}  // namespace

nlohmann::json finding_groups(const nlohmann::json& findings) {
  // Per group: its findings' signatures and occurrences, and its smallest case (ops, CTAs,
  // elements, then the signature: the same on every machine).
  struct Group {
    nlohmann::json signatures = nlohmann::json::array();
    std::int64_t occurrences = 0;
    const nlohmann::json* smallest = nullptr;
  };
  const auto size_key = [](const nlohmann::json& f) {
    const auto& z = f.contains("size") && f["size"].is_object() ? f["size"] : nlohmann::json();
    const auto num = [&](const char* k) {
      return z.is_object() && z.contains(k) && z[k].is_number_integer() ? z[k].get<std::int64_t>()
                                                                        : INT64_MAX;
    };
    return std::make_tuple(num("ops"), num("ctas"), num("elements"),
                           f.value("signature", std::string()));
  };
  std::map<std::string, Group> groups;
  for (const auto& f : findings) {
    if (!f.is_object() || !f.contains("signature") || !f["signature"].is_string()) continue;
    const std::string signature = f["signature"].get<std::string>();
    const std::string group =
        f.contains("group") && f["group"].is_string() ? f["group"].get<std::string>() : signature;
    Group& g = groups[group];
    g.signatures.push_back(signature);
    g.occurrences += f.contains("occurrences") && f["occurrences"].is_number_integer()
                         ? f["occurrences"].get<std::int64_t>()
                         : 1;
    if (!g.smallest || size_key(f) < size_key(*g.smallest)) g.smallest = &f;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, g] : groups) {
    out.push_back({{"group", name},
                   {"findings", g.signatures.size()},
                   {"signatures", g.signatures},
                   {"occurrences", g.occurrences},
                   {"smallest",
                    {{"signature", (*g.smallest)["signature"]},
                     {"case_file", g.smallest->value("case_file", std::string())},
                     {"size", g.smallest->value("size", nlohmann::json::object())}}}});
  }
  return out;
}

CampaignTotals merge_worker_states(const CampaignDirectory& dir, std::int64_t jobs) {
  CampaignTotals t;
  for (std::int64_t w = 0; w < jobs; ++w) {
    const WorkerState s = dir.load_worker(w);
    t.cases += s.cases;
    t.seconds = std::max(t.seconds, s.seconds);
    t.worker_crashes += s.crashes;
    t.coverage.merge(s.coverage);
    for (const auto& [sig, n] : s.signatures) t.signatures[sig] += n;
    for (const auto& [reason, n] : s.unavailable) t.unavailable[reason] += n;
    for (const auto& [executor, n] : s.runs) t.runs[executor] += n;
  }
  return t;
}

nlohmann::json summary_json(const CampaignOptions& o, const CampaignTotals& t,
                            const std::vector<FindingRecord>& f) {
  nlohmann::json j;
  j["collfuzz"] = {{"version", collfuzz_version()}, {"commit", collfuzz_commit()}};
  j["seed"] = o.seed;
  j["executors"] = o.executors;
  j["jobs"] = o.jobs;
  j["host"] = host_name();
  j["shard"] = o.shard.to_json();
  j["allocator"] = allocator_name();  // this process's: figures from two machines compare with it
  j["budget"] = {{"seconds", o.seconds}, {"cases", o.cases}};
  j["cases"] = t.cases;
  j["seconds"] = t.seconds;
  j["cases_per_second"] = t.seconds > 0 ? static_cast<double>(t.cases) / t.seconds : 0.0;
  j["this_run"] = {{"cases", t.run_cases},
                   {"seconds", t.run_seconds},
                   {"cases_per_second",
                    t.run_seconds > 0 ? static_cast<double>(t.run_cases) / t.run_seconds : 0.0}};
  j["worker_crashes"] = t.worker_crashes;
  j["coverage"] = t.coverage.to_json();
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& r : f) {
    const auto it = t.signatures.find(r.signature);
    const std::string group = r.outcomes.contains("group") && r.outcomes["group"].is_string()
                                  ? r.outcomes["group"].get<std::string>()
                                  : r.signature;
    findings.push_back({{"signature", r.signature},
                        {"group", group},
                        {"case_file", "findings/" + r.case_file},
                        {"outcomes_file", "findings/" + r.outcomes_file},
                        {"occurrences", it == t.signatures.end() ? 1 : it->second},
                        {"found", r.outcomes.value("found", nlohmann::json::object())},
                        {"shrunk", r.outcomes.value("shrunk", false)},
                        {"size", r.outcomes.value("size", nlohmann::json::object())}});
    // The result of running its script once (finding_repro_run.h).
    set_reproduced(findings.back(), r.reproduced);
  }
  j["findings"] = findings;
  j["groups"] = finding_groups(findings);
  // Known divergences (--baseline): counted, not findings. Occurrences are the fast workers'
  // (saved in their state); one seen only by the slow pool counts its first occurrence.
  j["baseline"] = o.baseline;
  nlohmann::json known = nlohmann::json::array();
  for (const auto& r : t.known) {
    const auto it = t.signatures.find(r.signature);
    known.push_back({{"signature", r.signature},
                     {"occurrences", it == t.signatures.end() ? 1 : it->second},
                     {"reason", r.outcomes.value("reason", std::string())},
                     {"case_file", "known/" + r.case_file}});
    if (r.outcomes.contains("known_bug")) known.back()["known_bug"] = r.outcomes["known_bug"];
  }
  j["known"] = known;
  j["known_bugs_file"] = o.known_bugs_file;
  // The fast workers' unavailable runs, per executor and reason (the slow pool's are in
  // slow_pool).
  nlohmann::json unavailable = nlohmann::json::object();
  for (const auto& [key, n] : t.unavailable) {
    const auto colon = key.find(": ");
    unavailable[key.substr(0, colon)][colon == std::string::npos ? "" : key.substr(colon + 2)] = n;
  }
  j["unavailable"] = unavailable;
  j["health"] = health_checks(o, t);
  if (!t.flaky.empty()) j["flaky"] = t.flaky;
  if (!t.slow_pool.is_null()) j["slow_pool"] = t.slow_pool;
  return j;
}

std::string summary_markdown(const nlohmann::json& s) {
  std::string md = "# collfuzz campaign summary\n\n";
  md += "| | |\n|---|---|\n";
  // An object field read safely: a merged or older summary may lack it.
  const auto object = [&](const char* key) {
    return s.contains(key) && s[key].is_object() ? s[key] : nlohmann::json::object();
  };
  const nlohmann::json built_by = object("collfuzz");
  const nlohmann::json shard = object("shard");
  md += "| collfuzz | " + built_by.value("version", std::string("?")) + " (commit " +
        built_by.value("commit", std::string("?")) + ") |\n";
  md += "| seed | " + std::to_string(s["seed"].get<std::uint64_t>()) + " |\n";
  std::string ex;
  for (const auto& e : s["executors"]) ex += (ex.empty() ? "" : ", ") + e.get<std::string>();
  md += "| executors | reference vs " + (ex.empty() ? std::string("(none)") : ex) + " |\n";
  if (shard.value("count", 1) > 1) {
    md += "| shard | " + std::to_string(shard.value("index", std::uint64_t{0})) + "/" +
          std::to_string(shard.value("count", std::uint64_t{1})) + " |\n";
  }
  if (s.contains("host")) md += "| host | " + s["host"].get<std::string>() + " |\n";
  md += "| worker processes | " + std::to_string(s["jobs"].get<std::int64_t>()) + " |\n";
  md += "| cases run | " + std::to_string(s["cases"].get<std::int64_t>()) + " |\n";
  md += "| seconds | " + fixed(s["seconds"].get<double>(), 1) + " |\n";
  md += "| cases/s | " + fixed(s["cases_per_second"].get<double>(), 0) + " |\n";
  if (s.contains("allocator")) md += "| allocator | " + s["allocator"].get<std::string>() + " |\n";
  const auto& cov = s["coverage"];
  md += "| rule coverage | " + std::to_string(cov["rules_hit"].get<std::size_t>()) + " of " +
        std::to_string(cov["rules_total"].get<std::size_t>()) +
        " rules that the checked profiles can fire (" +
        std::to_string(cov.value("rules_in_table", cov["rules_total"].get<std::size_t>())) +
        " in the table) |\n";
  md += "| worker crashes | " + std::to_string(s["worker_crashes"].get<std::int64_t>()) + " |\n";
  md += "| findings | " + std::to_string(s["findings"].size()) + " |\n";
  const nlohmann::json groups =
      s.contains("groups") && s["groups"].is_array() ? s["groups"] : finding_groups(s["findings"]);
  md += "| root-cause groups | " + std::to_string(groups.size()) + " |\n\n";

  md +=
      "The charts (throughput, coverage over time, outcome mix, rule heat map, findings): "
      "[report.html](report.html) (`collfuzz report <dir>` rewrites it).\n\n";
  if (!groups.empty()) {
    md +=
        "## Root-cause groups\n\nOne bug is one group (docs/bug-finding.md, \"Root-cause "
        "groups\"): the findings whose cases first diverge the same way.\n\n"
        "| group | findings | occurrences | smallest case |\n|---|---|---|---|\n";
    for (const auto& g : groups) {
      const auto& sm = g["smallest"];
      const std::string file = sm.value("case_file", std::string());
      md += "| `" + g.value("group", std::string()) + "` | " + g["findings"].dump() + " | " +
            g["occurrences"].dump() + " | [" + file + "](" + file + ") |\n";
    }
    md += "\n";
  }
  md += "## Findings\n\n";
  if (s["findings"].empty()) {
    md += "None.\n\n";
  } else {
    md +=
        "| signature | group | occurrences | case file | size (ops, CTAs, elements) | found in "
        "|\n|---|---|---|---|---|---|\n";
    for (const auto& f : s["findings"]) {
      const auto& size = f["size"];
      std::string sz = size.contains("ops")
                           ? std::to_string(size["ops"].get<std::int64_t>()) + ", " +
                                 std::to_string(size["ctas"].get<std::int64_t>()) + ", " +
                                 std::to_string(size["elements"].get<std::int64_t>())
                           : "-";
      if (!f["shrunk"].get<bool>()) sz += " (not shrunk)";
      md += "| `" + f["signature"].get<std::string>() + "` | `" +
            f.value("group", f["signature"].get<std::string>()) + "` | " +
            std::to_string(f["occurrences"].get<std::int64_t>()) + " | [" +
            f["case_file"].get<std::string>() + "](" + f["case_file"].get<std::string>() + ") | " +
            sz + " | " + f["found"].value("case", std::string("-")) + " |\n";
    }
    md += "\n" + reproduced_markdown(s);
  }

  md += "## Outcome kinds\n\n| kind | mosaic | interpret |\n|---|---|---|\n";
  for (const auto& [kind, n] : cov["outcome_kinds"]["mosaic"].items()) {
    md += "| " + kind + " | " + std::to_string(n.get<std::int64_t>()) + " | " +
          std::to_string(cov["outcome_kinds"]["interpret"][kind].get<std::int64_t>()) + " |\n";
  }
  md +=
      "\n## Rule coverage\n\nHow often each rule was the one that rejected a case, per profile "
      "predicted.\n\n";
  md += "| rule | mosaic | interpret |\n|---|---|---|\n";
  for (const auto& [rule, n] : cov["rules"].items()) {
    const auto m = n["mosaic"].get<std::int64_t>();
    const auto i = n["interpret"].get<std::int64_t>();
    md += "| " + std::string(m + i == 0 ? "**" : "") + rule + (m + i == 0 ? "** (never)" : "") +
          " | " + std::to_string(m) + " | " + std::to_string(i) + " |\n";
  }
  md += health_markdown(s) + unavailable_markdown(s) + known_markdown(s) + flaky_markdown(s) +
        slow_pool_markdown(s);
  return md;
}

nlohmann::json write_summary(const CampaignDirectory& dir, const CampaignOptions& o,
                             const CampaignTotals& t, const std::vector<FindingRecord>& findings) {
  const nlohmann::json s = summary_json(o, t, findings);
  write_file_atomically(dir.out() / "summary.json", s.dump(2) + "\n");
  write_file_atomically(dir.out() / "summary.md", summary_markdown(s));
  return s;
}

}  // namespace collfuzz::campaign
