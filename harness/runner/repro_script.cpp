#include "harness/runner/repro_script.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/core/build_info.h"
#include "harness/core/case_json.h"
#include "harness/core/jax_version.h"
#include "harness/core/outcome_json.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rule_fix.h"
#include "oracles/reference/rules.h"

namespace collfuzz {

namespace {
constexpr double kGeneratorSeconds = 60;           // start-up (numpy) plus one case
constexpr std::size_t kMaxScriptLine = 64u << 20;  // a script spells out every output element
}  // namespace

const char* to_string(ReproMode m) {
  switch (m) {
    case ReproMode::kInterpret:
      return "interpret";
    case ReproMode::kGpu:
      return "gpu";
    case ReproMode::kLower:
      return "lower";
  }
  return "interpret";
}

std::optional<ReproMode> parse_repro_mode(const std::string& s) {
  if (s == "interpret") return ReproMode::kInterpret;
  if (s == "gpu") return ReproMode::kGpu;
  if (s == "lower") return ReproMode::kLower;
  return std::nullopt;
}

Profile repro_profile(ReproMode m) {
  return m == ReproMode::kInterpret ? Profile::kInterpret : Profile::kMosaic;
}

std::string repro_request(const Case& c, ReproMode mode, const std::string& command) {
  Prediction p = predict(c, repro_profile(mode));
  // Interpret mode's run-time errors that depend on which thread or CTA gets there first: the
  // script accepts any of them, as the diagnostic oracle does (docs/outcome-format.md).
  add_interleaving_alternatives(c, p.outcome);
  nlohmann::json req;
  req["case"] = case_to_json(c);
  req["mode"] = to_string(mode);
  req["expected"] = outcome_to_json(p.outcome);
  req["match"] = "exact";
  if (p.outcome.diagnostic) {
    if (const Rule* r = find_rule(p.outcome.diagnostic->rule)) {
      req["match"] = r->match == RuleMatch::kContains ? "contains" : "exact";
      req["fix"] = std::string(rule_fix(r->id));
    }
  }
  req["collfuzz"] = collfuzz_version_line();
  req["jax"] = to_string(c.target.jax);
  req["command"] = command;
  return req.dump();
}

ReproGenerator::ReproGenerator(std::string python, std::string root)
    : jax_(JaxPython::resolve(std::move(python), std::move(root))) {}

ReproGenerator::~ReproGenerator() = default;

std::string ReproGenerator::unavailable() const {
  return jax_.unavailable("cfjax_repro.py", "generator");
}

ReproScript ReproGenerator::generate(const Case& c, ReproMode mode, const std::string& command) {
  if (!child_) {
    auto child = std::make_unique<process::ChildProcess>();
    std::string why;
    if (!child->spawn({jax_.python, jax_.script("cfjax_repro.py")}, 2, why))
      throw std::runtime_error("cannot start the script generator (" + jax_.python + "): " + why);
    child_ = std::move(child);
  }
  if (!child_->write_line(repro_request(c, mode, command))) {
    child_.reset();
    throw std::runtime_error("the script generator closed its input");
  }
  std::string line;
  const auto r = child_->read_line(kGeneratorSeconds, kMaxScriptLine, line);
  if (r != process::ChildProcess::Read::kLine) {
    child_.reset();
    throw std::runtime_error("the script generator gave no answer (" + jax_.python + ")");
  }
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::runtime_error("the script generator's answer is not JSON");
  ReproScript out;
  if (j.contains("script") && j["script"].is_string()) out.script = j["script"];
  if (j.contains("error") && j["error"].is_string()) out.error = j["error"];
  if (out.script.empty() && out.error.empty())
    throw std::runtime_error("the script generator answered neither a script nor an error");
  return out;
}

}  // namespace collfuzz
