// What each profile does with one case: the compiler (mosaic) and GPU interpret mode
// (interpret) each accept it or raise, as the reference predicts. `collfuzz run` shows both, so
// "interpret accepts what the compiler rejects" is visible at a glance (docs/cli.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz {

struct ProfileAcceptance {
  Profile profile = Profile::kMosaic;
  Outcome outcome;  // the reference's prediction for this profile
};

// Both profiles' predictions for the case, mosaic first.
std::vector<ProfileAcceptance> predict_each_profile(const Case& c);

// "accepts (completed)" or "raises ValueError: MESSAGE [rule]".
std::string describe_acceptance(const Outcome& o);

// The profiles' lines, then, when one accepts what the other rejects (or both raise different
// diagnostics), a line that says so.
std::string describe_profiles(const std::vector<ProfileAcceptance>& profiles);

// {"mosaic": {"accepted", "kind", "exception", "message", "rule", "stage"}, "interpret": {...},
//  "agree": bool}.
nlohmann::json profiles_to_json(const std::vector<ProfileAcceptance>& profiles);

}  // namespace collfuzz
