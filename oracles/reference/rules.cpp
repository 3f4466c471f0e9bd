#include "oracles/reference/rules.h"

#include <array>

namespace collfuzz {
namespace {

using enum Stage;
using enum RuleProfiles;
using enum RuleMatch;
using enum RuleBasis;

// A row may end with a since and an until (JAX releases); both default to empty.
constexpr Rule make_rule(RuleId id, std::string_view name, Stage stage, std::string_view exc,
                         std::string_view msg, std::string_view section, RuleProfiles profiles,
                         RuleMatch match, RuleBasis basis, std::string_view summary,
                         std::string_view since = {}, std::string_view until = {}) {
  return Rule{id, name, stage, exc, msg, section, profiles, match, basis, summary, since, until};
}

constexpr std::array<Rule, static_cast<std::size_t>(RuleId::kCount)> kRules = {{
#define COLLFUZZ_RULE(Enum, ...) make_rule(RuleId::Enum, __VA_ARGS__),
#include "oracles/reference/rules.def"
#undef COLLFUZZ_RULE
}};

}  // namespace

const char* to_string(Stage s) {
  switch (s) {
    case kMesh:
      return "mesh";
    case kTrace:
      return "trace";
    case kInterpret:
      return "interpret";
    case kEstimate:
      return "estimate";
    case kModule:
      return "module";
    case kLower:
      return "lower";
    case kVerify:
      return "verify";
    case kDialect:
      return "dialect";
    case kFinalize:
      return "finalize";
    case kCompile:
      return "compile";
    case kLaunch:
      return "launch";
    case kRun:
      return "run";
  }
  return "?";
}

const char* to_string(RuleProfiles p) {
  switch (p) {
    case kMosaicOnly:
      return "mosaic";
    case kInterpretOnly:
      return "interpret";
    case kBoth:
      return "both";
  }
  return "?";
}

const char* to_string(RuleBasis b) {
  switch (b) {
    case kSpec:
      return "spec";
    case kDerived:
      return "derived";
    case kUnverified:
      return "unverified";
  }
  return "?";
}

const Rule& rule(RuleId id) { return kRules[static_cast<std::size_t>(id)]; }

std::span<const Rule> all_rules() { return kRules; }

const Rule* find_rule(std::string_view name) {
  for (const auto& r : kRules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool rule_holds(const Rule& r, JaxVersion v) { return jax_version_in_range(v, r.since, r.until); }

namespace {
std::string jax_range(const Rule& r) {
  if (r.since.empty() && r.until.empty()) return "all";
  std::string out;
  if (!r.since.empty()) out += ">= " + std::string(r.since);
  if (!r.until.empty()) out += std::string(out.empty() ? "" : ", ") + "< " + std::string(r.until);
  return out;
}
}  // namespace

std::string rule_changes_markdown() {
  std::string out = "| id | JAX | exception | message |\n|---|---|---|---|\n";
  for (const Rule& r : kRules) {
    if (r.since.empty() && r.until.empty()) continue;
    std::string msg(r.message);
    for (std::size_t i = 0; (i = msg.find('|', i)) != std::string::npos; i += 2)
      msg.replace(i, 1, "\\|");
    out += "| `" + std::string(r.name) + "` | " + jax_range(r) + " | " + std::string(r.exception) +
           " | `" + msg + "` |\n";
  }
  return out;
}

namespace {
std::string rules_markdown_of(const std::optional<JaxVersion>& only);
}  // namespace

std::string rules_markdown() { return rules_markdown_of(std::nullopt); }
std::string rules_markdown(JaxVersion v) { return rules_markdown_of(v); }

namespace {
std::string rules_markdown_of(const std::optional<JaxVersion>& only) {
  std::string out =
      "| id | stage | raised by | exception | message | spec | basis | JAX "
      "|\n|---|---|---|---|---|---|---|---|\n";
  for (const Rule& r : kRules) {
    if (only && !rule_holds(r, *only)) continue;
    std::string msg(r.message);
    for (std::size_t i = 0; (i = msg.find('|', i)) != std::string::npos; i += 2)
      msg.replace(i, 1, "\\|");
    out += "| `" + std::string(r.name) + "` | " + to_string(r.stage) + " | " +
           to_string(r.profiles) + " | " + std::string(r.exception) + " | `" + msg + "` | " +
           std::string(r.section) + " | " + to_string(r.basis) + " | " + jax_range(r) + " |\n";
  }
  return out;
}
}  // namespace

std::string fill_template(std::string_view tmpl, const Holes& holes) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{') {
      const std::size_t close = tmpl.find('}', i);
      if (close != std::string_view::npos) {
        const std::string_view name = tmpl.substr(i + 1, close - i - 1);
        bool found = false;
        for (const auto& [k, v] : holes) {
          if (k == name) {
            out += v;
            found = true;
            break;
          }
        }
        if (found) {
          i = close + 1;
          continue;
        }
      }
    }
    out += tmpl[i++];
  }
  return out;
}

}  // namespace collfuzz

#include <regex>

namespace collfuzz {

namespace {
struct Compiled {
  const Rule* rule;
  std::regex re;
};
const std::vector<Compiled>& compiled_rules() {
  static const std::vector<Compiled> compiled = [] {
    std::vector<Compiled> out;
    for (const Rule& r : all_rules()) {
      std::string pattern = r.match == RuleMatch::kContains ? ".*" : "";
      std::string_view t = r.message;
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '{') {
          const std::size_t close = t.find('}', i);
          if (close != std::string_view::npos) {
            pattern += "[\\s\\S]*?";
            i = close;
            continue;
          }
        }
        if (std::string_view("\\^$.|?*+()[]{}").find(t[i]) != std::string_view::npos)
          pattern += '\\';
        pattern += t[i];
      }
      if (r.match == RuleMatch::kContains) pattern += "[\\s\\S]*";
      out.push_back(Compiled{&r, std::regex(pattern)});
    }
    return out;
  }();
  return compiled;
}
}  // namespace

bool rule_matches(const Rule& r, std::string_view exception, std::string_view message) {
  if (r.exception != exception) return false;
  return std::regex_match(std::string(message),
                          compiled_rules()[static_cast<std::size_t>(r.id)].re);
}

const Rule* match_rule(std::string_view exception, std::string_view message, Profile profile,
                       std::string_view stage) {
  const std::string msg(message);
  const RuleProfiles other =
      profile == Profile::kMosaic ? RuleProfiles::kInterpretOnly : RuleProfiles::kMosaicOnly;
  const Rule* first = nullptr;
  for (const Compiled& c : compiled_rules()) {
    if (c.rule->exception != exception || c.rule->profiles == other) continue;
    if (!std::regex_match(msg, c.re)) continue;
    if (stage.empty() || to_string(c.rule->stage) == stage) return c.rule;
    if (!first) first = c.rule;
  }
  return first;
}

}  // namespace collfuzz
