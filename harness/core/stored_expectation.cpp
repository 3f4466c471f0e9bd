#include "harness/core/stored_expectation.h"

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

using nlohmann::json;

bool is_profile_keyed(const json& expect) {
  return expect.is_object() && !expect.contains("kind") &&
         (expect.contains("mosaic") || expect.contains("interpret"));
}

std::vector<std::pair<Profile, const json*>> stored_expectations(const json& expect,
                                                                 Profile target_profile,
                                                                 const std::string& path) {
  std::vector<std::pair<Profile, const json*>> out;
  if (expect.is_null()) return out;
  if (!expect.is_object() || expect.contains("kind") || expect.empty()) {
    out.emplace_back(target_profile, &expect);  // one outcome: outcome_from_json checks it
    return out;
  }
  jr::object(expect, path, {"mosaic", "interpret"});
  if (const json* m = jr::member(expect, "mosaic")) out.emplace_back(Profile::kMosaic, m);
  if (const json* i = jr::member(expect, "interpret")) out.emplace_back(Profile::kInterpret, i);
  if (out.empty()) {
    throw InputError(path, "an expectation keyed by profile needs \"mosaic\" or \"interpret\"");
  }
  return out;
}

const json* stored_expectation_for(const json& expect, Profile profile, Profile target_profile) {
  if (expect.is_null()) return nullptr;
  if (!is_profile_keyed(expect)) return profile == target_profile ? &expect : nullptr;
  const char* key = profile == Profile::kMosaic ? "mosaic" : "interpret";
  return expect.contains(key) ? &expect[key] : nullptr;
}

}  // namespace collfuzz
