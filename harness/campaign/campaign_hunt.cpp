#include "harness/campaign/campaign_hunt.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "generators/case_stream.h"
#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_options.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/findings_store.h"
#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/outcome_json.h"
#include "harness/process/child_process.h"
#include "harness/runner/baseline.h"

namespace collfuzz::campaign {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// An executor that answers with the outcome a campaign stored for it: the faithful reference's
// check of that outcome goes through the campaign's own CaseCheck (the same JAX release choice,
// the same undefined-behaviour rule, the same signatures).
class StoredOutcome : public Executor {
 public:
  StoredOutcome(std::string name, Outcome outcome)
      : name_(std::move(name)), outcome_(std::move(outcome)) {}
  std::string name() const override { return name_; }
  Profile profile() const override { return outcome_.profile; }
  Outcome run(const Case&) override { return outcome_; }

 private:
  std::string name_;
  Outcome outcome_;
};

// Whether the faithful reference (this process never selects a mutant) has `signature` against
// the outcome that `executor` gave on the finding's case.
bool faithful_has(const nlohmann::json& report, const std::string& signature,
                  const std::string& executor, std::uint64_t seed, std::string& why) {
  const std::uint64_t index = report["found"]["index"].get<std::uint64_t>();
  Case c = generators::generate_case(seed, index);
  if (report.value("shrunk", false)) {
    why = "the finding was shrunk before it was read";
    return true;  // not credited: its stored outcome is the shrunk case's
  }
  // The stored outcome comes from the report's own run of the executor; a nondeterministic one
  // may not have repeated the disagreement there. Only an outcome that shows the signature
  // against the mutated reference can be held against the faithful one.
  bool shown = false;
  for (const auto& m : report.value("mismatches", nlohmann::json::array()))
    shown = shown || m.value("signature", std::string()) == signature;
  if (!shown) {
    why = "the outcome stored with it does not show it (a nondeterministic run)";
    return true;
  }
  for (const auto& e : report["executors"]) {
    if (e.value("executor", std::string()) != executor) continue;
    std::vector<std::unique_ptr<Executor>> one;
    one.push_back(std::make_unique<StoredOutcome>(
        executor, outcome_from_json(e["outcome"], c, "executors[" + executor + "].outcome")));
    CaseCheck check(std::move(one), DiagnosticLevel::kMessage);
    for (const auto& m : check.mismatches(c)) {
      if (m.signature == signature) {
        why = "the faithful reference has it too";
        return true;
      }
    }
    return false;
  }
  why = "no outcome of " + executor + " stored";
  return true;
}

// The last timeline record's compared cases of `executor` and the fast loop's cases.
void last_counts(const std::filesystem::path& timeline, const std::string& executor,
                 CampaignHunt& h) {
  std::ifstream in(timeline);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  if (last.empty()) return;
  try {
    const auto j = nlohmann::json::parse(last);
    h.fast_cases = j.value("cases", std::int64_t{0});
    if (j.contains("per_executor") && j["per_executor"].contains(executor))
      h.executor_cases = j["per_executor"][executor].value("compared", std::int64_t{0});
  } catch (const std::exception&) {
    // A line being written: the counts stay as they were.
  }
}

}  // namespace

CampaignHunt hunt_in_campaign(Mutant mutant, const CampaignHuntOptions& ho) {
  CampaignHunt h;
  h.mutant = std::string(mutant_name(mutant));
  h.out = ho.work / h.mutant;
  std::filesystem::remove_all(h.out);
  std::filesystem::create_directories(ho.work);

  CampaignOptions o;
  o.seed = ho.seed;
  o.seconds = ho.seconds;
  o.executors = ho.executors;
  o.jobs = ho.jobs;
  o.slow_jobs = ho.slow_jobs;
  o.out = h.out;
  o.executor_options = ho.executor_options;
  o.allow_unavailable = true;
  // Findings are not shrunk: shrinking a JAX finding holds the slow worker for minutes, and a
  // finding the faithful reference has too would delay the hunt by that much.
  o.shrink = false;
  // A mutant's findings are the mutant's: their JAX scripts would only take a core from the hunt.
  o.run_scripts = false;
  o.baseline = ho.baseline;
  if (!o.baseline.empty()) {
    const Baseline baseline = Baseline::load(o.baseline);
    for (const auto& d : baseline.all()) o.known.emplace(d.signature, d.reason);
  }

  const auto start = std::chrono::steady_clock::now();
  process::ChildProcess campaign;
  std::string why_not;
  const std::filesystem::path log = ho.work / (h.mutant + ".log");
  const bool forked = campaign.fork(
      [&]() -> int {
        // The campaign's output goes to a log; its workers inherit the selected mutant.
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          ::dup2(fd, STDOUT_FILENO);
          ::dup2(fd, STDERR_FILENO);
          ::close(fd);
        }
        set_active_mutant(mutant);
        return Campaign(o).run(std::cout, false);
      },
      why_not);
  if (!forked) {
    h.error = "could not start the campaign: " + why_not;
    return h;
  }

  const std::filesystem::path findings = h.out / "findings";
  std::set<std::string> seen;
  const auto scan = [&]() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(findings, ec)) {
      const std::string file = e.path().filename().string();
      const std::string suffix = ".outcomes.json";
      if (file.size() <= suffix.size() || file.substr(file.size() - suffix.size()) != suffix ||
          seen.count(file))
        continue;
      nlohmann::json report;
      try {
        report = load_json_file(e.path());
      } catch (const std::exception&) {
        continue;  // read again at the next scan
      }
      seen.insert(file);
      const std::string signature = report.value("signature", std::string());
      const std::string executor = signature.substr(signature.rfind(':') + 1);
      std::string why;
      if (!report.contains("found") || faithful_has(report, signature, executor, ho.seed, why)) {
        h.not_caused.push_back(signature + (why.empty() ? "" : " (" + why + ")"));
        continue;
      }
      h.detected = true;
      h.seconds_to_report = since(start);
      h.seconds_to_detection = report["found"].value("seconds", h.seconds_to_report);
      h.signature = signature;
      h.executor = executor;
      h.index = report["found"]["index"].get<std::uint64_t>();
      last_counts(h.out / "timeline.jsonl", executor, h);
      return true;
    }
    return false;
  };

  bool stopping = false;
  while (true) {
    const auto status = campaign.poll_exit();
    if (!h.detected && scan() && !stopping) {
      // Found: the campaign stops as at its budget's end (SIGTERM).
      campaign.signal_group(SIGTERM);
      stopping = true;
    }
    if (status) break;
    if (stopping && since(start) > h.seconds_to_report + 60) {
      campaign.stop();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!h.detected) scan();
  if (!h.detected) last_counts(h.out / "timeline.jsonl", ho.executors.back(), h);
  return h;
}

}  // namespace collfuzz::campaign
