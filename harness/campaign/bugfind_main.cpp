// collfuzz_bugfind: the campaign's bug-finding power, measured. For each planted bug of the
// simulator and the lowering (harness/core/mutants.h), the default campaign's loop runs the
// reference against the mutant simulator on one core, up to --seconds each, and the table says
// whether the bug was detected, how fast, and how small the shrunk case is (docs/bug-finding.md).
// With --profile interpret, each planted bug of the reference's interpret profile is hunted by a
// real campaign (the slow pool with jax-interpret) run with the mutated reference.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <vector>

#include "harness/campaign/bug_finding.h"
#include "harness/campaign/campaign_hunt.h"
#include "harness/campaign/isolated_loop.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/executors/executor.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/baseline_lookup.h"

namespace {

using namespace collfuzz;
using namespace collfuzz::campaign;

nlohmann::json size_json(const CaseSize& s) {
  return {{"ops", s.ops}, {"ctas", s.ctas}, {"elements", s.elements}};
}

// Runs body() in a child process (a simulator that crashes must not end the measurement); its JSON,
// or an error naming the mutant.
nlohmann::json isolated(lowering::Mutant m, const std::function<nlohmann::json()>& body) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("collfuzz-bugfind-" + std::to_string(::getpid()) + "-" +
                     std::string(lowering::mutant_name(m)) + ".json");
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    write_file_atomically(file, body().dump());
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && std::filesystem::exists(file)) {
    nlohmann::json j = load_json_file(file);
    std::filesystem::remove(file);
    return j;
  }
  return {{"mutant", std::string(lowering::mutant_name(m))},
          {"detected", false},
          {"error", WIFSIGNALED(status) ? "the hunt died of " + signal_name(WTERMSIG(status))
                                        : "the hunt failed"}};
}

// Hunts one mutant in a child process.
nlohmann::json hunt_isolated(lowering::Mutant m, std::uint64_t seed, double seconds) {
  return isolated(m, [&] {
    const MutantHunt h =
        hunt_mutant(m, seed, seconds, ShrinkLimits{2000, std::chrono::milliseconds(20000)});
    return nlohmann::json{
        {"mutant", h.mutant},
        {"detected", h.detected},
        {"seconds_to_detection", h.seconds_to_detection},
        {"cases_to_detection", h.cases_to_detection},
        {"signature", h.signature},
        {"found_in", h.case_name},
        {"original_size", size_json(h.original)},
        {"shrunk_size", size_json(h.shrunk)},
        {"shrink_seconds", h.shrink_seconds},
        {"shrunk_case", h.shrunk_case_json.empty() ? nlohmann::json()
                                                   : nlohmann::json::parse(h.shrunk_case_json)}};
  });
}

// The findings and root-cause groups of every mutant (--groups): one table row each.
int groups_table(const std::vector<lowering::Mutant>& mutants, std::uint64_t seed, double seconds,
                 const std::string& json_file) {
  std::cout << "| mutant | cases | findings (signatures) | groups | groups (findings each) |\n"
            << "|---|---|---|---|---|\n";
  nlohmann::json results = nlohmann::json::array();
  std::size_t most = 0;
  for (lowering::Mutant m : mutants) {
    const nlohmann::json r = isolated(m, [&] {
      const MutantGroups g = mutant_groups(m, seed, seconds);
      std::map<std::string, std::int64_t> per_group;
      for (const auto& [signature, group] : g.groups) ++per_group[group];
      return nlohmann::json{{"mutant", g.mutant},          {"cases", g.cases},
                            {"findings", g.groups.size()}, {"groups", g.group_count()},
                            {"signatures", g.groups},      {"per_group", per_group}};
    });
    std::string list;
    if (r.contains("per_group")) {
      for (const auto& [group, n] : r["per_group"].items())
        list += (list.empty() ? "`" : ", `") + group + "` (" + n.dump() + ")";
    }
    std::cout << "| " << r.value("mutant", std::string("?")) << " | "
              << r.value("cases", std::int64_t{0}) << " | " << r.value("findings", std::size_t{0})
              << " | " << r.value("groups", std::size_t{0}) << " | "
              << (r.contains("error") ? r["error"].get<std::string>() : list) << " |\n"
              << std::flush;
    most = std::max(most, r.value("groups", std::size_t{0}));
    results.push_back(r);
  }
  std::printf("\nat most %zu groups per mutant (seed %llu, %.0f s each)\n", most,
              static_cast<unsigned long long>(seed), seconds);
  if (!json_file.empty()) {
    write_file_atomically(json_file, nlohmann::json{{"seed", seed},
                                                    {"budget_seconds", seconds},
                                                    {"most_groups", most},
                                                    {"results", results}}
                                             .dump(2) +
                                         "\n");
  }
  return kExitOk;
}

double median_of(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  if (times.empty()) return 0;
  return times.size() % 2 ? times[times.size() / 2]
                          : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
}

// --profile interpret: each mutant of the reference's interpret profile hunted by a campaign.
int interpret_table(const std::vector<lowering::Mutant>& mutants, const CampaignHuntOptions& ho,
                    const std::string& json_file) {
  std::cout << "| mutant | detected | time to detection (s) | reported (s) | "
            << ho.executors.back() << " cases | fast-loop cases | signature |\n"
            << "|---|---|---|---|---|---|---|\n"
            << std::flush;
  nlohmann::json results = nlohmann::json::array();
  std::vector<double> times;
  int detected = 0;
  for (lowering::Mutant m : mutants) {
    const CampaignHunt h = hunt_in_campaign(m, ho);
    char t[32] = "-";
    char r[32] = "-";
    if (h.detected) {
      std::snprintf(t, sizeof t, "%.1f", h.seconds_to_detection);
      std::snprintf(r, sizeof r, "%.1f", h.seconds_to_report);
      ++detected;
      times.push_back(h.seconds_to_detection);
    }
    std::cout << "| " << h.mutant << " | " << (h.detected ? "yes" : "**no**") << " | " << t << " | "
              << r << " | " << h.executor_cases << " | " << h.fast_cases << " | "
              << (h.detected        ? "`" + h.signature + "`"
                  : h.error.empty() ? "-"
                                    : h.error)
              << " |\n"
              << std::flush;
    results.push_back({{"mutant", h.mutant},
                       {"detected", h.detected},
                       {"seconds_to_detection", h.seconds_to_detection},
                       {"seconds_to_report", h.seconds_to_report},
                       {"signature", h.signature},
                       {"index", h.index},
                       {"executor_cases", h.executor_cases},
                       {"fast_cases", h.fast_cases},
                       {"not_caused", h.not_caused},
                       {"error", h.error},
                       {"campaign", h.out.string()}});
  }
  // An undetected mutant counts as never detected (past the budget), so that the median is of
  // every mutant hunted, not of the detected ones.
  std::vector<double> all = times;
  all.resize(mutants.size(), std::numeric_limits<double>::infinity());
  const double median = median_of(all);
  std::printf(
      "\n%d of %zu mutants detected; median time to detection %.1f s over all %zu (an undetected "
      "one counts as never; seed %llu, budget %.0f s each, executors %s)\n",
      detected, mutants.size(), median, mutants.size(), static_cast<unsigned long long>(ho.seed),
      ho.seconds,
      [&] {
        std::string list;
        for (const auto& e : ho.executors) list += (list.empty() ? "" : ",") + e;
        return list;
      }()
          .c_str());
  if (!json_file.empty()) {
    write_file_atomically(
        json_file, nlohmann::json{{"profile", "interpret"},
                                  {"seed", ho.seed},
                                  {"budget_seconds", ho.seconds},
                                  {"executors", ho.executors},
                                  {"detected", detected},
                                  {"mutants", mutants.size()},
                                  {"median_seconds", std::isfinite(median) ? nlohmann::json(median)
                                                                           : nlohmann::json()},
                                  {"results", results}}
                           .dump(2) +
                       "\n");
  }
  return detected == static_cast<int>(mutants.size()) ? kExitOk : kExitMismatch;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "collfuzz_bugfind: run the default campaign against each mutant of the simulator and "
      "lowering"};
  double seconds = 60;
  std::uint64_t seed = 1;
  std::string only;
  std::string json_file;
  std::string cases_dir;
  app.add_option("--seconds", seconds, "budget per mutant")->capture_default_str();
  app.add_option("--seed", seed, "the campaign's seed")->capture_default_str();
  app.add_option("--mutants", only, "comma-separated mutant names (default: all)");
  app.add_option("--json", json_file, "write the results as JSON here");
  app.add_option("--cases", cases_dir, "write each mutant's shrunk case here");
  std::string profile = "mosaic";
  app.add_option("--profile", profile,
                 "mosaic: the simulator's and lowering's mutants against sim; interpret: the "
                 "reference's interpret-profile mutants, each hunted by a campaign with the slow "
                 "pool")
      ->check(CLI::IsMember({"mosaic", "interpret"}))
      ->capture_default_str();
  CampaignHuntOptions ho;
  std::string executors = "jax-interpret";
  app.add_option("--executors", executors, "--profile interpret: the campaign's executors")
      ->capture_default_str();
  app.add_option("--jobs", ho.jobs, "--profile interpret: the campaign's fast workers")
      ->capture_default_str();
  app.add_option("--slow-jobs", ho.slow_jobs, "--profile interpret: the slow pool's workers")
      ->capture_default_str();
  std::string work = "bugfind-campaigns";
  app.add_option("--work", work, "--profile interpret: one campaign directory per mutant here")
      ->capture_default_str();
  app.add_option(
      "--baseline", ho.baseline,
      "--profile interpret: known divergences, never credited (default "
      "the first known-divergences.json of COLLFUZZ_ROOT, next to the binary, the working "
      "directory, the source tree: baseline_lookup.h)");
  app.add_option("--python", ho.executor_options.python,
                 "--profile interpret: the JAX executors' Python (default .venv-jax)");
  bool groups = false;
  app.add_flag("--groups", groups,
               "run the whole budget and count each mutant's findings and root-cause groups");
  CLI11_PARSE(app, argc, argv);

  std::vector<lowering::Mutant> mutants;
  const bool interpret = profile == "interpret";
  for (int m = 1; m < static_cast<int>(lowering::Mutant::kCount); ++m) {
    const auto mutant = static_cast<lowering::Mutant>(m);
    if (is_interpret_mutant(mutant) != interpret) continue;
    const std::string name(lowering::mutant_name(mutant));
    if (only.empty() || ("," + only + ",").find("," + name + ",") != std::string::npos)
      mutants.push_back(mutant);
  }
  if (interpret) {
    ho.seed = seed;
    ho.seconds = seconds;
    ho.work = work;
    try {
      ho.executors = parse_executor_list(executors);
    } catch (const std::exception& e) {
      std::cerr << "collfuzz_bugfind: --executors: " << e.what() << "\n";
      return kExitBadInput;
    }
    const BaselineLocation baseline_at = find_known_divergences(ho.baseline);
    std::cerr << "collfuzz_bugfind: " << baseline_location_line(baseline_at) << "\n";
    ho.baseline = baseline_at.path;
    return interpret_table(mutants, ho, json_file);
  }
  if (groups) return groups_table(mutants, seed, seconds, json_file);
  std::cout << "| mutant | detected | time to detection (s) | cases | signature | shrunk case "
               "(ops, CTAs, elements) |\n"
            << "|---|---|---|---|---|---|\n";
  nlohmann::json results = nlohmann::json::array();
  std::vector<double> times;
  int detected = 0;
  for (lowering::Mutant m : mutants) {
    nlohmann::json h = hunt_isolated(m, seed, seconds);
    const bool found = h.value("detected", false);
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", h.value("seconds_to_detection", 0.0));
    std::string size = "-";
    if (found) {
      const auto& z = h["shrunk_size"];
      size = std::to_string(z["ops"].get<std::int64_t>()) + ", " +
             std::to_string(z["ctas"].get<std::int64_t>()) + ", " +
             std::to_string(z["elements"].get<std::int64_t>());
    }
    std::cout << "| " << h["mutant"].get<std::string>() << " | " << (found ? "yes" : "**no**")
              << " | " << (found ? time : "-") << " | "
              << h.value("cases_to_detection", std::int64_t{0}) << " | "
              << (found ? "`" + h["signature"].get<std::string>() + "`"
                        : h.value("error", std::string("-")))
              << " | " << size << " |\n"
              << std::flush;
    if (found) {
      ++detected;
      times.push_back(h["seconds_to_detection"].get<double>());
      if (!cases_dir.empty()) {
        write_file_atomically(cases_dir + "/" + h["mutant"].get<std::string>() + ".json",
                              h["shrunk_case"].dump(2) + "\n");
      }
    }
    h.erase("shrunk_case");
    results.push_back(h);
  }
  std::sort(times.begin(), times.end());
  const double median =
      times.empty()
          ? 0
          : (times.size() % 2 ? times[times.size() / 2]
                              : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2);
  std::printf(
      "\n%d of %zu mutants detected; median time to detection %.3f s (seed %llu, budget %.0f s "
      "each)\n",
      detected, mutants.size(), median, static_cast<unsigned long long>(seed), seconds);
  if (!json_file.empty()) {
    write_file_atomically(json_file, nlohmann::json{{"seed", seed},
                                                    {"budget_seconds", seconds},
                                                    {"detected", detected},
                                                    {"mutants", mutants.size()},
                                                    {"median_seconds", median},
                                                    {"results", results}}
                                             .dump(2) +
                                         "\n");
  }
  return detected == static_cast<int>(mutants.size()) ? kExitOk : kExitMismatch;
}
