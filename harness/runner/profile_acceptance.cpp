#include "harness/runner/profile_acceptance.h"

#include "harness/core/terminal_text.h"
#include "oracles/reference/reference.h"

namespace collfuzz {

std::vector<ProfileAcceptance> predict_each_profile(const Case& c) {
  std::vector<ProfileAcceptance> out;
  for (const Profile p : {Profile::kMosaic, Profile::kInterpret})
    out.push_back({p, predict(c, p).outcome});
  return out;
}

std::string describe_acceptance(const Outcome& o) {
  if (o.kind == OutcomeKind::kRejected && o.diagnostic) {
    const Diagnostic& d = *o.diagnostic;
    std::string s = "raises " + terminal_text(d.exception) + ": " + terminal_text(d.message);
    if (!d.rule.empty()) s += " [" + terminal_text(d.rule) + "]";
    return s;
  }
  if (o.accepted()) return std::string("accepts (") + to_string(o.kind) + ")";
  return to_string(o.kind);
}

namespace {

bool same_diagnostic(const Outcome& a, const Outcome& b) {
  if (a.accepted() || b.accepted()) return a.accepted() == b.accepted();
  if (!a.diagnostic || !b.diagnostic) return a.kind == b.kind;
  return a.diagnostic->exception == b.diagnostic->exception &&
         a.diagnostic->message == b.diagnostic->message;
}

bool profiles_agree(const std::vector<ProfileAcceptance>& profiles) {
  for (const auto& p : profiles)
    if (!same_diagnostic(p.outcome, profiles.front().outcome)) return false;
  return true;
}

}  // namespace

std::string describe_profiles(const std::vector<ProfileAcceptance>& profiles) {
  std::string s;
  for (const auto& p : profiles) {
    s += std::string("  ") +
         (p.profile == Profile::kMosaic ? "mosaic (compiler):  " : "interpret (CPU):    ");
    s += describe_acceptance(p.outcome) + "\n";
  }
  if (profiles.size() == 2 && !profiles_agree(profiles)) {
    const Outcome& m = profiles[0].outcome;
    const Outcome& i = profiles[1].outcome;
    if (i.accepted() && !m.accepted())
      s += "  profiles differ: interpret mode accepts what the compiler rejects\n";
    else if (m.accepted() && !i.accepted())
      s += "  profiles differ: the compiler accepts what interpret mode rejects\n";
    else
      s += "  profiles differ: the two raise different diagnostics\n";
  }
  return s;
}

nlohmann::json profiles_to_json(const std::vector<ProfileAcceptance>& profiles) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : profiles) {
    nlohmann::json e{{"accepted", p.outcome.accepted()}, {"kind", to_string(p.outcome.kind)}};
    if (p.outcome.diagnostic) {
      e["exception"] = p.outcome.diagnostic->exception;
      e["message"] = p.outcome.diagnostic->message;
      e["rule"] = p.outcome.diagnostic->rule;
      e["stage"] = p.outcome.diagnostic->stage;
    }
    j[to_string(p.profile)] = e;
  }
  j["agree"] = profiles_agree(profiles);
  return j;
}

}  // namespace collfuzz
