#include "gpu/worker_protocol.h"

#include <chrono>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpu/framed_outcome.h"
#include "harness/core/case_json.h"
#include "harness/core/outcome_json.h"

namespace collfuzz::gpu {
namespace {

using nlohmann::json;

Outcome failed(const WorkerHello& hello, OutcomeKind kind, std::string reason) {
  Outcome o;
  o.kind = kind;
  o.executor = hello.name;
  o.profile = Profile::kMosaic;
  o.reason = std::move(reason);
  o.info = hello.info;
  return o;
}

json bad_request(const json& id, const std::string& why) {
  return json{{"id", id}, {"outcome", {{"kind", "crash"}, {"reason", "bad request: " + why}}}};
}

}  // namespace

std::string hello_line(const WorkerHello& hello) {
  json h{{"hello", kProtocol}, {"name", hello.name}, {"profile", "mosaic"}, {"batch", true}};
  if (!hello.unavailable.empty()) h["unavailable"] = hello.unavailable;
  json info = json::object();
  for (const auto& [k, v] : hello.info) info[k] = v;
  h["info"] = info;
  return h.dump();
}

WorkerResponse handle_request(const std::string& line, const WorkerHello& hello,
                              const RunCases& run) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return {};
  json request;
  try {
    request = parse_json_bounded(line, "request");
  } catch (const std::exception& e) {
    return {bad_request(nullptr, std::string("not JSON: ") + e.what()).dump(), {}};
  }
  if (!request.is_object() || !request.contains("id") || !request["id"].is_number_integer()) {
    const json id = request.is_object() && request.contains("id") ? request["id"] : json(nullptr);
    return {bad_request(id, "a request is an object with an integer id").dump(), {}};
  }
  const json id = request["id"];
  const bool batch = request.contains("cases");
  if (!batch && !request.contains("case"))
    return {bad_request(id, "no case and no cases").dump(), {}};
  const json items = batch ? request["cases"] : json::array({request["case"]});
  if (!items.is_array()) return {bad_request(id, "cases is not an array").dump(), {}};
  const bool binary =
      request.contains("binary") && request["binary"].is_boolean() && request["binary"].get<bool>();

  // Cases that do not parse are crashes of their own; the others run together.
  std::vector<std::optional<Outcome>> outcomes(items.size());
  std::vector<Case> cases;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < items.size(); ++i) {
    try {
      cases.push_back(case_from_json(items[i]));
      where.push_back(i);
    } catch (const std::exception& e) {
      outcomes[i] = failed(hello, OutcomeKind::kCrash, std::string("bad case: ") + e.what());
    }
  }
  if (!hello.unavailable.empty()) {
    for (std::size_t k = 0; k < where.size(); ++k) {
      outcomes[where[k]] = failed(hello, OutcomeKind::kUnavailable, hello.unavailable);
    }
  } else if (!cases.empty()) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Outcome> ran;
    try {
      ran = run(cases);
    } catch (const std::exception& e) {
      ran.clear();
      for (std::size_t k = 0; k < cases.size(); ++k) {
        ran.push_back(failed(hello, OutcomeKind::kCrash, std::string("worker error: ") + e.what()));
      }
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.3f", ms / static_cast<double>(cases.size()));
    for (std::size_t k = 0; k < where.size() && k < ran.size(); ++k) {
      ran[k].info["elapsed_ms"] = elapsed;
      outcomes[where[k]] = std::move(ran[k]);
    }
  }
  WorkerResponse response;
  json out = json::array();
  for (auto& o : outcomes) {
    Outcome outcome = o ? std::move(*o) : failed(hello, OutcomeKind::kCrash, "no outcome");
    out.push_back(binary ? outcome_to_framed_json(std::move(outcome), response.blob)
                         : outcome_to_json(outcome));
  }
  json r = batch ? json{{"id", id}, {"outcomes", std::move(out)}}
                 : json{{"id", id}, {"outcome", std::move(out[0])}};
  if (binary) r["binary_bytes"] = response.blob.size();
  response.line = r.dump();
  return response;
}

}  // namespace collfuzz::gpu
