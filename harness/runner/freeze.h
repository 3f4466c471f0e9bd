// collfuzz freeze: the reference's prediction written into a case's `expect`, so that a case
// without one (an imported kernel, a generated case) becomes a regression case that `replay`
// compares (docs/cli.md, "collfuzz freeze").
//
// The prediction is for the case's JAX release when it is pinned (target.jax, or --jax, which
// pins it); for an unpinned case it must be the same in every modelled release, or the case is
// refused and must be pinned. An `expect` already there that agrees with the reference is kept
// as written (a hand-written message_regex stays); one that disagrees is a regression and is
// replaced only with `update`.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/jax_version.h"

namespace collfuzz {

struct FreezeOptions {
  std::optional<JaxVersion> jax;  // pin the case to this release (written as target.jax)
  bool both_profiles = false;     // expect = {"mosaic": ..., "interpret": ...}
  bool update = false;            // replace an expect that disagrees with the reference
};

enum class FreezeAction {
  kWritten,    // expect written (there was none, or it lacked a profile, or --update)
  kKept,       // the stored expect already agrees with the reference
  kDisagrees,  // the stored expect disagrees and `update` is off: nothing written
};

struct FreezeResult {
  FreezeAction action = FreezeAction::kKept;
  std::string detail;           // what was written, or the disagreement
  nlohmann::ordered_json file;  // the case file with its expect (kWritten)
};

// `file_json` is the case file as read (key order kept), `c` the case parsed from it, `file` its
// name for messages. Throws InputError (naming target.jax) when the releases predict different
// outcomes for an unpinned case, or --jax contradicts the case's own target.jax.
FreezeResult freeze_case(const nlohmann::ordered_json& file_json, const Case& c,
                         const std::string& file, const FreezeOptions& options);

}  // namespace collfuzz
