#include "harness/runner/freeze.h"

#include <vector>

#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/core/stored_expectation.h"
#include "harness/runner/case_runner.h"
#include "harness/runner/profile_acceptance.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

// The prediction as `expect` stores it: what the profile does, without the executor's name.
nlohmann::json expectation_of(const Outcome& o) {
  nlohmann::json j = outcome_to_json(o, /*with_bytes=*/true);
  j.erase("executor");
  j.erase("info");
  // predict() leaves other interleavings' errors out (a racy case lists them by hand,
  // docs/corpus.md); the alternatives it gives (the layout search's running out of fuel) are
  // kept: JAX may raise them instead.
  return j;
}

Case pinned(Case c, JaxVersion v) {
  c.target.jax = v;
  c.target.jax_pinned = true;
  return c;
}

// The profile's expectation, the same in every release the case holds in (or an InputError).
nlohmann::json expectation_for(const Case& c, Profile profile, const std::string& file) {
  std::vector<JaxVersion> releases;
  if (c.target.jax_pinned) {
    releases.push_back(c.target.jax);
  } else {
    for (const JaxVersion v : known_jax_versions()) releases.push_back(v);
  }
  nlohmann::json first;
  std::string first_said;
  for (const JaxVersion v : releases) {
    const Outcome o = predict(pinned(c, v), profile).outcome;
    nlohmann::json j = expectation_of(o);
    if (v == releases.front()) {
      first = std::move(j);
      first_said = describe_acceptance(o);
      continue;
    }
    if (j != first) {
      throw InputError(
          file + ":$.target.jax",
          std::string("the case is not pinned to a JAX release and the releases predict "
                      "different outcomes for the ") +
              to_string(profile) + " profile (" + to_string(releases.front()) + ": " + first_said +
              "; " + to_string(v) + ": " + describe_acceptance(o) + "): pin it with --jax " +
              to_string(releases.front()) + " or --jax " + to_string(v));
    }
  }
  return first;
}

}  // namespace

FreezeResult freeze_case(const nlohmann::ordered_json& file_json, const Case& original,
                         const std::string& file, const FreezeOptions& options) {
  Case c = original;
  FreezeResult result;
  result.file = file_json;
  if (options.jax) {
    if (c.target.jax_pinned && c.target.jax != *options.jax) {
      throw InputError(file + ":$.target.jax",
                       std::string("the case is pinned to JAX ") + to_string(c.target.jax) +
                           "; --jax " + to_string(*options.jax) +
                           " would change what it states (edit target.jax to re-pin it)");
    }
    c = pinned(c, *options.jax);
    result.file["target"]["jax"] = to_string(*options.jax);
  }
  std::vector<Profile> profiles{c.target.profile};
  if (options.both_profiles) profiles = {Profile::kMosaic, Profile::kInterpret};
  nlohmann::json fresh;
  if (options.both_profiles) {
    for (const Profile p : profiles) fresh[to_string(p)] = expectation_for(c, p, file);
  } else {
    fresh = expectation_for(c, profiles.front(), file);
  }

  if (file_json.contains("expect")) {
    const nlohmann::json stored = nlohmann::json::parse(file_json["expect"].dump());
    CaseRunner runner({"reference"}, ExecutorOptions{}, DiagnosticLevel::kMessage);
    const CaseReport report = runner.run(c, &stored, file);
    const bool agrees = report.stored && report.stored->agrees();
    const bool has_every_profile =
        !options.both_profiles ||
        (is_profile_keyed(stored) && stored.contains("mosaic") && stored.contains("interpret"));
    if (agrees && has_every_profile && !options.jax) {
      result.action = FreezeAction::kKept;
      result.detail = "its expect already agrees with the reference: kept as written";
      return result;
    }
    if (!agrees && !options.update) {
      result.action = FreezeAction::kDisagrees;
      result.detail = "its expect disagrees with the reference";
      if (report.stored)
        for (const auto& m : report.stored->mismatches) result.detail += "\n  " + m.detail;
      result.detail += "\n(--update replaces it with the reference's prediction)";
      return result;
    }
  }
  result.file["expect"] = nlohmann::ordered_json::parse(fresh.dump());
  result.action = FreezeAction::kWritten;
  std::string what;
  for (const Profile p : profiles) {
    if (!what.empty()) what += "; ";
    what += std::string(to_string(p)) + " " + describe_acceptance(predict(c, p).outcome);
  }
  result.detail = "expect written for JAX " +
                  (c.target.jax_pinned ? std::string(to_string(c.target.jax))
                                       : known_jax_versions_list() + " (unpinned)") +
                  ": " + what;
  return result;
}

}  // namespace collfuzz
