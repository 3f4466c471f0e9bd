#include "harness/report/merge.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "generators/rule_coverage.h"
#include "harness/campaign/campaign_summary.h"
#include "harness/core/build_info.h"
#include "harness/core/errors.h"
#include "harness/report/run_reader.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::report {
namespace {

// The fields of a summary that are statistics or findings; every other one is provenance and
// goes into the run's record untouched.
const std::set<std::string> kNotProvenance = {"coverage", "findings", "groups", "runs",
                                              "this_run", "problems", "merged"};

std::string read_all(const std::filesystem::path& f) {
  std::string error;
  std::ifstream in(f, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json run_record(const nlohmann::json& summary, const std::filesystem::path& dir) {
  nlohmann::json r = nlohmann::json::object();
  for (const auto& [k, v] : summary.items()) {
    if (!kNotProvenance.count(k)) r[k] = v;
  }
  r["dir"] = dir.filename().string();
  r["findings"] = summary.contains("findings") ? summary["findings"].size() : 0;
  r["groups"] = summary.contains("groups") && summary["groups"].is_array()
                    ? summary["groups"].size()
                    : r["findings"].get<std::size_t>();
  const auto& cov = summary["coverage"];
  r["rules_hit"] = cov.value("rules_hit", 0);
  r["rules_total"] = cov.value("rules_total", 0);
  if (cov.contains("outcome_kinds")) r["outcome_kinds"] = cov["outcome_kinds"];
  if (cov.contains("rules") && cov["rules"].is_object()) {
    nlohmann::json counts = nlohmann::json::object();  // each rule's count over both profiles
    for (const auto& [rule, n] : cov["rules"].items()) {
      std::int64_t total = 0;
      for (const auto& [p, v] : n.items())
        total += v.is_number_integer() ? v.get<std::int64_t>() : 0;
      counts[rule] = total;
    }
    r["rule_counts"] = counts;
  }
  return r;
}

// Two records of the same run (a run given twice, or inside a merged input too): equal but for
// the directory name it was copied to.
std::string run_identity(nlohmann::json r) {
  r.erase("dir");
  r.erase("timeline");
  return r.dump();
}

struct Best {
  FindingFiles files;
  std::int64_t occurrences = 0;
  std::int64_t runs = 0;
};

auto rank(const FindingFiles& f) {
  const bool shrunk = f.outcomes.value("shrunk", false);
  const auto& found = f.outcomes.contains("found") && f.outcomes["found"].is_object()
                          ? f.outcomes["found"]
                          : nlohmann::json::object();
  return std::make_tuple(f.ops, f.ctas, f.elements, !shrunk, found.value("seed", std::uint64_t{0}),
                         found.value("index", std::uint64_t{0}), f.case_file.filename().string());
}

double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

}  // namespace

MergeResult merge_runs(const std::vector<std::filesystem::path>& inputs,
                       const std::filesystem::path& into) {
  std::error_code ec;
  for (const auto& in : inputs) {
    if (!std::filesystem::is_directory(in)) throw InputError(in.string(), "not a directory");
    if (std::filesystem::exists(into) && std::filesystem::equivalent(in, into, ec))
      throw InputError("--into", "is also an input (" + in.string() + ")");
  }
  MergeResult result;
  generators::RuleCoverage coverage;
  std::set<std::string> executors;
  std::vector<nlohmann::json> runs;
  std::set<std::string> run_ids;
  std::set<std::string> timelines;   // written under into/timelines
  std::map<std::string, Best> best;  // by signature
  std::int64_t cases = 0, run_cases = 0, jobs = 0, crashes = 0;
  double seconds = 0, run_seconds = 0, rate = 0;
  std::optional<std::uint64_t> seed;
  bool any_summary = false;

  for (const auto& in : inputs) {
    RunDirectory run = read_run_directory(in);
    for (auto& p : run.problems) result.problems.push_back(std::move(p));
    std::map<std::string, std::int64_t> occurrences;
    if (run.summary) {
      const nlohmann::json& s = *run.summary;
      std::vector<nlohmann::json> records;
      if (s.contains("runs") && s["runs"].is_array()) {
        for (const auto& r : s["runs"]) records.push_back(r);
      } else {
        records.push_back(run_record(s, in));
      }
      bool duplicate = false;
      for (const auto& r : records) duplicate = duplicate || run_ids.count(run_identity(r));
      if (duplicate) {
        result.problems.push_back(in.string() +
                                  ": holds a run already merged from another input; skipped");
        continue;
      }
      try {
        coverage.merge(generators::RuleCoverage::from_json(s["coverage"]));
      } catch (const std::exception& e) {
        result.problems.push_back((in / "summary.json").string() +
                                  ": its coverage does not read: " + e.what() + "; skipped");
        continue;
      }
      const bool merged_input = s.contains("runs") && s["runs"].is_array();
      for (auto& r : records) {
        run_ids.insert(run_identity(r));
        // The run's timeline, renumbered by its place in the merged list.
        std::string lines;
        if (!merged_input) {
          for (const auto& t : run.timeline) lines += t.dump() + "\n";
        } else if (r.contains("timeline") && r["timeline"].is_string()) {
          const auto rel = std::filesystem::path(r["timeline"].get<std::string>());
          if (rel.filename() == rel.lexically_normal().filename() && !rel.is_absolute()) {
            for (const auto& t : read_jsonl(in / rel)) lines += t.dump() + "\n";
          }
        }
        r.erase("timeline");
        if (!lines.empty()) {
          char name[32];
          std::snprintf(name, sizeof name, "run-%03zu.jsonl", runs.size());
          std::filesystem::create_directories(into / "timelines");
          write_file_atomically(into / "timelines" / name, lines);
          timelines.insert(name);
          r["timeline"] = std::string("timelines/") + name;
        }
        runs.push_back(std::move(r));
      }
      any_summary = true;
      cases += s["cases"].get<std::int64_t>();
      seconds = std::max(seconds, number(s, "seconds"));
      rate += number(s, "cases_per_second");
      jobs +=
          s.contains("jobs") && s["jobs"].is_number_integer() ? s["jobs"].get<std::int64_t>() : 0;
      crashes += s.contains("worker_crashes") && s["worker_crashes"].is_number_integer()
                     ? s["worker_crashes"].get<std::int64_t>()
                     : 0;
      if (s.contains("this_run") && s["this_run"].is_object()) {
        run_cases += static_cast<std::int64_t>(number(s["this_run"], "cases"));
        run_seconds = std::max(run_seconds, number(s["this_run"], "seconds"));
      }
      if (!seed && s.contains("seed") && s["seed"].is_number_unsigned())
        seed = s["seed"].get<std::uint64_t>();
      if (s.contains("executors") && s["executors"].is_array()) {
        for (const auto& e : s["executors"])
          if (e.is_string()) executors.insert(e.get<std::string>());
      }
      if (s.contains("findings") && s["findings"].is_array()) {
        for (const auto& f : s["findings"]) {
          if (f.is_object() && f.contains("signature") && f["signature"].is_string())
            occurrences[f["signature"].get<std::string>()] +=
                f.contains("occurrences") && f["occurrences"].is_number_integer()
                    ? f["occurrences"].get<std::int64_t>()
                    : 1;
        }
      }
    }
    for (auto& f : run.findings) {
      Best& b = best[f.signature];
      const auto it = occurrences.find(f.signature);
      b.occurrences += it == occurrences.end() ? 1 : it->second;
      ++b.runs;
      if (b.runs == 1 || rank(f) < rank(b.files)) b.files = std::move(f);
    }
  }

  // The findings folder: the kept case of each signature (and its reproducer); files of an
  // earlier merge that are no longer kept are removed, so that merging again gives the same.
  const auto findings_dir = into / "findings";
  std::filesystem::create_directories(findings_dir);
  std::set<std::string> written;
  nlohmann::json findings = nlohmann::json::array();
  std::vector<const Best*> order;
  for (const auto& [sig, b] : best) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const Best* a, const Best* b) {
    return std::tie(a->files.group, a->files.signature) <
           std::tie(b->files.group, b->files.signature);
  });
  for (const Best* b : order) {
    const FindingFiles& f = b->files;
    const std::string outcomes_name = f.outcomes_file.filename().string();
    const std::string case_name = f.case_file.filename().string();
    write_file_atomically(findings_dir / outcomes_name, read_all(f.outcomes_file));
    write_file_atomically(findings_dir / case_name, read_all(f.case_file));
    written.insert(outcomes_name);
    written.insert(case_name);
    if (f.python_file) {
      write_file_atomically(findings_dir / f.python_file->filename(), read_all(*f.python_file));
      written.insert(f.python_file->filename().string());
    }
    if (f.reproduced_file) {
      write_file_atomically(findings_dir / f.reproduced_file->filename(),
                            read_all(*f.reproduced_file));
      written.insert(f.reproduced_file->filename().string());
    }
    nlohmann::json entry = {{"signature", f.signature},
                            {"case_file", "findings/" + case_name},
                            {"outcomes_file", "findings/" + outcomes_name},
                            {"occurrences", b->occurrences},
                            {"runs", b->runs},
                            {"found", f.outcomes.value("found", nlohmann::json::object())},
                            {"shrunk", f.outcomes.value("shrunk", false)},
                            {"size", f.outcomes.value("size", nlohmann::json::object())}};
    entry["group"] = f.group;
    campaign::set_reproduced(entry, f.reproduced);
    findings.push_back(std::move(entry));
  }
  for (const auto& e : std::filesystem::directory_iterator(findings_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && !written.count(name) &&
        (name.ends_with(".json") || name.ends_with(".py")))
      std::filesystem::remove(e.path(), ec);
  }

  for (const auto& e : std::filesystem::directory_iterator(into / "timelines", ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && !timelines.count(name) && name.ends_with(".jsonl"))
      std::filesystem::remove(e.path(), ec);
  }

  if (!any_summary) {
    result.problems.push_back("no input had a readable summary.json: the statistics are empty");
  }
  nlohmann::json j;
  j["merged"] = true;
  // The collfuzz that merged; each run's own collfuzz, JAX and host stay in its `runs` record.
  j["collfuzz"] = {{"version", collfuzz_version()}, {"commit", collfuzz_commit()}};
  j["seed"] = seed.value_or(0);
  j["executors"] = std::vector<std::string>(executors.begin(), executors.end());
  j["jobs"] = jobs;
  j["cases"] = cases;
  j["seconds"] = seconds;
  j["cases_per_second"] = rate;  // the runs side by side: their rates add up
  j["this_run"] = {
      {"cases", run_cases},
      {"seconds", run_seconds},
      {"cases_per_second", run_seconds > 0 ? static_cast<double>(run_cases) / run_seconds : 0.0}};
  j["worker_crashes"] = crashes;
  j["coverage"] = coverage.to_json();
  j["groups"] = campaign::finding_groups(findings);
  j["findings"] = findings;
  j["runs"] = runs;
  j["problems"] = result.problems;
  write_file_atomically(into / "summary.json", j.dump(2) + "\n");
  write_file_atomically(into / "summary.md", merged_summary_markdown(j));
  result.summary = std::move(j);
  return result;
}

std::string merged_summary_markdown(const nlohmann::json& s) {
  std::string md = campaign::summary_markdown(s);
  md +=
      "\n## Runs merged\n\n| run | host | shard | seed | cases | cases/s | findings |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& r : s["runs"]) {
    std::string shard = "-";
    if (r.contains("shard") && r["shard"].is_object())
      shard = r["shard"].value("index", nlohmann::json(0)).dump() + "/" +
              r["shard"].value("count", nlohmann::json(1)).dump();
    md += "| " + r.value("dir", std::string("?")) + " | " + r.value("host", std::string("-")) +
          " | " + shard + " | " + r.value("seed", nlohmann::json(0)).dump() + " | " +
          r.value("cases", nlohmann::json(0)).dump() + " | " +
          std::to_string(static_cast<std::int64_t>(r.value("cases_per_second", 0.0))) + " | " +
          r.value("findings", nlohmann::json(0)).dump() + " |\n";
  }
  if (!s["problems"].empty()) {
    md += "\n## Input files skipped\n\n";
    for (const auto& p : s["problems"]) md += "- " + p.get<std::string>() + "\n";
  }
  return md;
}

}  // namespace collfuzz::report
