#include "harness/campaign/campaign_state.h"

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::campaign {

nlohmann::json WorkerState::to_json() const {
  return {
      {"worker", worker},         {"next_index", next_index},   {"cases", cases},
      {"seconds", seconds},       {"crashes", crashes},         {"coverage", coverage.to_json()},
      {"signatures", signatures}, {"unavailable", unavailable}, {"runs", runs}};
}

WorkerState WorkerState::from_json(const nlohmann::json& j) {
  WorkerState s;
  s.worker = j.at("worker").get<std::int64_t>();
  s.next_index = j.at("next_index").get<std::uint64_t>();
  s.cases = j.at("cases").get<std::int64_t>();
  s.seconds = j.at("seconds").get<double>();
  s.crashes = j.at("crashes").get<std::int64_t>();
  s.coverage = generators::RuleCoverage::from_json(j.at("coverage"));
  s.signatures = j.at("signatures").get<std::map<std::string, std::int64_t>>();
  if (j.contains("unavailable"))  // absent in a state saved before it was counted
    s.unavailable = j.at("unavailable").get<std::map<std::string, std::int64_t>>();
  if (j.contains("runs")) s.runs = j.at("runs").get<std::map<std::string, std::int64_t>>();
  return s;
}

CampaignDirectory::CampaignDirectory(std::filesystem::path out) : out_(std::move(out)) {}

std::filesystem::path CampaignDirectory::worker_file(std::int64_t worker) const {
  return out_ / "state" / ("worker-" + std::to_string(worker) + ".json");
}

bool CampaignDirectory::has_campaign() const {
  return std::filesystem::exists(out_ / "campaign.json");
}

void CampaignDirectory::save_options(const CampaignOptions& o) const {
  const char* level = o.level == DiagnosticLevel::kVerdict ? "verdict"
                      : o.level == DiagnosticLevel::kRule  ? "rule"
                                                           : "message";
  const nlohmann::json j{{"format", 1},
                         {"seed", o.seed},
                         {"seconds", o.seconds},
                         {"cases", o.cases},
                         {"executors", o.executors},
                         {"jobs", o.jobs},
                         {"shrink", o.shrink},
                         {"level", level}};
  nlohmann::json with_shard = j;
  with_shard["shard"] = o.shard.to_json();
  if (o.jax) with_shard["jax"] = to_string(*o.jax);
  write_file_atomically(out_ / "campaign.json", with_shard.dump(2) + "\n");
}

CampaignOptions CampaignDirectory::load_options() const {
  const auto file = out_ / "campaign.json";
  const nlohmann::json j = load_json_file(file);
  CampaignOptions o;
  try {
    o.seed = j.at("seed").get<std::uint64_t>();
    o.seconds = j.at("seconds").get<double>();
    o.cases = j.at("cases").get<std::int64_t>();
    o.executors = j.at("executors").get<std::vector<std::string>>();
    o.jobs = j.at("jobs").get<std::int64_t>();
    o.shrink = j.at("shrink").get<bool>();
    o.level = parse_diagnostic_level(j.at("level").get<std::string>())
                  .value_or(DiagnosticLevel::kMessage);
    if (j.contains("jax")) o.jax = require_jax_version(j["jax"].get<std::string>(), "jax");
    if (j.contains("shard")) {
      o.shard.index = j["shard"].at("index").get<std::uint64_t>();
      o.shard.count = j["shard"].at("count").get<std::uint64_t>();
      o.shard.source = j["shard"].value("source", std::string("campaign.json"));
      if (o.shard.count < 1 || o.shard.index >= o.shard.count)
        throw InputError(file.string(), "shard " + o.shard.text() + " is not I/N with I < N");
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string(), std::string("not a campaign file: ") + e.what());
  }
  o.out = out_;
  return o;
}

void CampaignDirectory::save_worker(const WorkerState& s) const {
  write_file_atomically(worker_file(s.worker), s.to_json().dump() + "\n");
}

WorkerState CampaignDirectory::load_worker(std::int64_t worker) const {
  const auto file = worker_file(worker);
  if (!std::filesystem::exists(file)) {
    WorkerState s;
    s.worker = worker;
    s.next_index = static_cast<std::uint64_t>(worker);
    return s;
  }
  try {
    return WorkerState::from_json(load_json_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string(), std::string("not a worker state file: ") + e.what());
  }
}

}  // namespace collfuzz::campaign
