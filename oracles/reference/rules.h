// The rule table (rules.def) as data: ids, stages, exception classes, message templates.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

// The stages JAX passes through, in order (docs/outcome-format.md).
enum class Stage : std::uint8_t {
  kMesh,
  kTrace,
  kInterpret,
  kEstimate,
  kModule,
  kLower,
  kVerify,
  kDialect,
  kFinalize,
  kCompile,
  kLaunch,
  kRun,
};
const char* to_string(Stage s);

enum class RuleProfiles : std::uint8_t { kMosaicOnly, kInterpretOnly, kBoth };
enum class RuleMatch : std::uint8_t { kExact, kContains };
enum class RuleBasis : std::uint8_t { kSpec, kDerived, kUnverified };

enum class RuleId : std::uint16_t {
#define COLLFUZZ_RULE(Enum, ...) Enum,
#include "oracles/reference/rules.def"
#undef COLLFUZZ_RULE
  kCount
};

struct Rule {
  RuleId id;
  std::string_view name;  // stable id, e.g. "copy.leader_tracked.one_axis"
  Stage stage;
  std::string_view exception;
  std::string_view message;  // template with {holes}
  std::string_view section;  // of ../shared/spec/mosaic-gpu-collectives.md
  RuleProfiles profiles;
  RuleMatch match;
  RuleBasis basis;
  std::string_view summary;
  // The JAX releases in which the rule holds, [since, until); empty = unbounded (rules.def).
  std::string_view since;
  std::string_view until;
};

// Whether rule `r` holds in JAX release `v` (its since/until).
bool rule_holds(const Rule& r, JaxVersion v);

const Rule& rule(RuleId id);
std::span<const Rule> all_rules();
const Rule* find_rule(std::string_view name);
const char* to_string(RuleProfiles p);
const char* to_string(RuleBasis b);

// The rule table as Markdown (docs/rules.md embeds it; a test keeps the two in step).
std::string rules_markdown();
// Only the rules that hold in JAX release `v`.
std::string rules_markdown(JaxVersion v);
// The rules that changed between JAX releases (rows with a since or until) as Markdown.
std::string rule_changes_markdown();

using Holes = std::vector<std::pair<std::string_view, std::string>>;
// Fills {name} holes of a template. A hole without a value is left as is.
std::string fill_template(std::string_view tmpl, const Holes& holes);

}  // namespace collfuzz

namespace collfuzz {
// The rule whose exception class and message template match a diagnostic seen by an executor
// (which does not know rule ids), or nullptr.
// Only rules raised under `profile` are considered, and one raised at `stage` is preferred (several
// rules share an empty AssertionError, for one).
const Rule* match_rule(std::string_view exception, std::string_view message, Profile profile,
                       std::string_view stage = {});
bool rule_matches(const Rule& r, std::string_view exception, std::string_view message);
}  // namespace collfuzz
