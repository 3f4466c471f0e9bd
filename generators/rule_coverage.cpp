#include "generators/rule_coverage.h"

#include <cstdio>

#include "harness/core/case_json.h"

namespace collfuzz::generators {
namespace {

constexpr Profile kAllProfiles[] = {Profile::kMosaic, Profile::kInterpret};
constexpr OutcomeKind kAllKinds[] = {OutcomeKind::kRejected, OutcomeKind::kCompleted,
                                     OutcomeKind::kDeadlock, OutcomeKind::kTimeout,
                                     OutcomeKind::kCrash,    OutcomeKind::kUnavailable,
                                     OutcomeKind::kUndefined};

std::string rate(std::int64_t n, std::int64_t total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f%%",
                total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0);
  return buf;
}

}  // namespace

void RuleCoverage::record(Profile profile, const Outcome& outcome) {
  const std::size_t p = index(profile);
  ++outcomes_[p];
  ++kinds_[static_cast<std::size_t>(outcome.kind)][p];
  if (outcome.kind != OutcomeKind::kRejected || !outcome.diagnostic) return;
  if (const Rule* r = find_rule(outcome.diagnostic->rule)) {
    ++fired_[static_cast<std::size_t>(r->id)][p];
  } else {
    ++unnamed_[p];
  }
}

void RuleCoverage::merge(const RuleCoverage& o) {
  for (std::size_t p = 0; p < kProfiles; ++p) {
    outcomes_[p] += o.outcomes_[p];
    unnamed_[p] += o.unnamed_[p];
    for (std::size_t r = 0; r < kRules; ++r) fired_[r][p] += o.fired_[r][p];
    for (std::size_t k = 0; k < kKinds; ++k) kinds_[k][p] += o.kinds_[k][p];
  }
}

std::int64_t RuleCoverage::fired(RuleId rule, Profile profile) const {
  return fired_[static_cast<std::size_t>(rule)][index(profile)];
}

std::int64_t RuleCoverage::kind(OutcomeKind k, Profile profile) const {
  return kinds_[static_cast<std::size_t>(k)][index(profile)];
}

std::size_t RuleCoverage::rules_hit() const { return kRules - rules_never_fired().size(); }

std::uint32_t RuleCoverage::profile_bits() const {
  std::uint32_t bits = 0;
  for (Profile p : kAllProfiles) {
    if (outcomes_[index(p)] > 0) bits |= 1u << index(p);
  }
  return bits;
}

std::size_t RuleCoverage::rules_reachable(std::uint32_t profile_bits) {
  if (profile_bits == 0) return kRules;
  const bool mosaic = profile_bits >> index(Profile::kMosaic) & 1u;
  const bool interpret = profile_bits >> index(Profile::kInterpret) & 1u;
  std::size_t n = 0;
  for (const Rule& r : all_rules()) {
    const bool m = r.profiles != RuleProfiles::kInterpretOnly;
    const bool i = r.profiles != RuleProfiles::kMosaicOnly;
    if ((m && mosaic) || (i && interpret)) ++n;
  }
  return n;
}

std::size_t RuleCoverage::rules_reachable() const { return rules_reachable(profile_bits()); }

std::vector<RuleId> RuleCoverage::rules_never_fired() const {
  std::vector<RuleId> out;
  for (std::size_t r = 0; r < kRules; ++r) {
    if (fired_[r][0] == 0 && fired_[r][1] == 0) out.push_back(static_cast<RuleId>(r));
  }
  return out;
}

nlohmann::json RuleCoverage::to_json() const {
  nlohmann::json j;
  nlohmann::json outcomes = nlohmann::json::object();
  nlohmann::json unnamed = nlohmann::json::object();
  nlohmann::json kinds = nlohmann::json::object();
  for (Profile p : kAllProfiles) {
    outcomes[to_string(p)] = outcomes_[index(p)];
    unnamed[to_string(p)] = unnamed_[index(p)];
    nlohmann::json per = nlohmann::json::object();
    for (OutcomeKind k : kAllKinds) per[to_string(k)] = kind(k, p);
    kinds[to_string(p)] = per;
  }
  nlohmann::json rules = nlohmann::json::object();
  for (const Rule& r : all_rules()) {
    rules[std::string(r.name)] = {{"mosaic", fired(r.id, Profile::kMosaic)},
                                  {"interpret", fired(r.id, Profile::kInterpret)}};
  }
  j["outcomes"] = outcomes;
  j["unnamed_diagnostics"] = unnamed;
  j["outcome_kinds"] = kinds;
  j["rules"] = rules;
  j["rules_hit"] = rules_hit();
  j["rules_total"] = rules_reachable();
  j["rules_in_table"] = kRules;
  return j;
}

RuleCoverage RuleCoverage::from_json(const nlohmann::json& j) {
  RuleCoverage c;
  for (Profile p : kAllProfiles) {
    const std::size_t i = index(p);
    c.outcomes_[i] = j.at("outcomes").at(to_string(p)).get<std::int64_t>();
    c.unnamed_[i] = j.at("unnamed_diagnostics").at(to_string(p)).get<std::int64_t>();
    for (OutcomeKind k : kAllKinds) {
      const auto& per = j.at("outcome_kinds").at(to_string(p));
      const auto it = per.find(to_string(k));
      if (it == per.end()) continue;  // a kind added since (undefined)
      c.kinds_[static_cast<std::size_t>(k)][i] = it->get<std::int64_t>();
    }
  }
  for (const Rule& r : all_rules()) {
    const auto it = j.at("rules").find(std::string(r.name));
    if (it == j.at("rules").end()) continue;  // a rule added since
    for (Profile p : kAllProfiles)
      c.fired_[static_cast<std::size_t>(r.id)][index(p)] = it->at(to_string(p)).get<std::int64_t>();
  }
  return c;
}

std::string RuleCoverage::to_text() const {
  const std::int64_t nm = outcomes(Profile::kMosaic);
  const std::int64_t ni = outcomes(Profile::kInterpret);
  std::string out = "rule coverage: " + std::to_string(rules_hit()) + " of " +
                    std::to_string(kRules) + " rules fired (mosaic outcomes " + std::to_string(nm) +
                    ", interpret outcomes " + std::to_string(ni) + ")\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-52s %10s %9s %10s %9s\n", "rule", "mosaic", "rate",
                "interpret", "rate");
  out += line;
  for (const Rule& r : all_rules()) {
    const auto m = fired(r.id, Profile::kMosaic);
    const auto i = fired(r.id, Profile::kInterpret);
    std::snprintf(line, sizeof line, "%s %-52s %10lld %9s %10lld %9s\n", (m || i) ? " " : "!",
                  std::string(r.name).c_str(), static_cast<long long>(m), rate(m, nm).c_str(),
                  static_cast<long long>(i), rate(i, ni).c_str());
    out += line;
  }
  out += "outcome kinds:\n";
  for (OutcomeKind k : kAllKinds) {
    const auto m = kind(k, Profile::kMosaic);
    const auto i = kind(k, Profile::kInterpret);
    std::snprintf(line, sizeof line, "  %-52s %10lld %9s %10lld %9s\n", to_string(k),
                  static_cast<long long>(m), rate(m, nm).c_str(), static_cast<long long>(i),
                  rate(i, ni).c_str());
    out += line;
  }
  if (unnamed(Profile::kMosaic) || unnamed(Profile::kInterpret)) {
    out += "  diagnostics naming no rule: mosaic " + std::to_string(unnamed(Profile::kMosaic)) +
           ", interpret " + std::to_string(unnamed(Profile::kInterpret)) + "\n";
  }
  return out;
}

}  // namespace collfuzz::generators
