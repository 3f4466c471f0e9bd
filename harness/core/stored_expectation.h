// A case's stored expectation (`expect`, docs/case-format.md): one outcome, for the case's
// target.profile, or an object keyed by profile, {"mosaic": outcome, "interpret": outcome}, so
// that one file holds what the compiler and GPU interpret mode each do with the same program.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz {

// Whether `expect` is the keyed form (an object without "kind", with "mosaic"/"interpret").
bool is_profile_keyed(const nlohmann::json& expect);

// The stored outcomes, each with the profile it is for: empty when `expect` is null. Throws
// InputError (at `path`) on a keyed form with an unknown key or no entry.
std::vector<std::pair<Profile, const nlohmann::json*>> stored_expectations(
    const nlohmann::json& expect, Profile target_profile, const std::string& path);

// The stored outcome for `profile`, or nullptr (absent, or a single outcome for the other one).
const nlohmann::json* stored_expectation_for(const nlohmann::json& expect, Profile profile,
                                             Profile target_profile);

}  // namespace collfuzz
