// Rule coverage: how often each rule of rules.def fired (was the rule that rejected a case),
// per profile, and how often each outcome kind came out. `collfuzz gen --stats`, the campaign's
// progress line and summary, and the coverage test read it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/outcome.h"
#include "oracles/reference/rules.h"

namespace collfuzz::generators {

class RuleCoverage {
 public:
  static constexpr std::size_t kProfiles = 2;
  static constexpr std::size_t kKinds = 7;
  static constexpr std::size_t kRules = static_cast<std::size_t>(RuleId::kCount);

  // Counts one predicted (or executed) outcome for `profile`.
  void record(Profile profile, const Outcome& outcome);
  void merge(const RuleCoverage& other);

  std::int64_t outcomes(Profile profile) const { return outcomes_[index(profile)]; }
  std::int64_t fired(RuleId rule, Profile profile) const;
  std::int64_t kind(OutcomeKind k, Profile profile) const;
  // Diagnostics whose rule id is not in rules.def (an executor's unnamed error).
  std::int64_t unnamed(Profile profile) const { return unnamed_[index(profile)]; }

  // Rules that fired under at least one profile, and those that never did.
  std::size_t rules_hit() const;
  // Rules that a profile with at least one recorded outcome can fire (all rules when none is
  // recorded): a campaign that checks only the compiler cannot reach interpret-only rules.
  std::size_t rules_reachable() const;
  // The same from a bit set of profiles (bit p: Profile p was checked).
  static std::size_t rules_reachable(std::uint32_t profile_bits);
  // The bit set of profiles with at least one recorded outcome.
  std::uint32_t profile_bits() const;
  std::vector<RuleId> rules_never_fired() const;

  nlohmann::json to_json() const;
  static RuleCoverage from_json(const nlohmann::json& j);
  // A table: one line per rule (id, fired per profile, rate), then the outcome kinds.
  std::string to_text() const;

 private:
  static std::size_t index(Profile p) { return static_cast<std::size_t>(p); }
  std::array<std::int64_t, kProfiles> outcomes_{};
  std::array<std::int64_t, kProfiles> unnamed_{};
  std::array<std::array<std::int64_t, kProfiles>, kRules> fired_{};
  std::array<std::array<std::int64_t, kProfiles>, kKinds> kinds_{};
};

}  // namespace collfuzz::generators
