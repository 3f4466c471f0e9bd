// Confirmation of disagreements that involve a nondeterministic executor (JAX's interpret mode
// with Pallas threads, jax-gpu, cuda, or any executor named in --confirm-executors): the case is
// rerun K times (--confirm, default 5) on that executor before it is reported. One that repeats
// every time is a finding, with its counts; one that does not is flaky: it is recorded apart
// (<out>/flaky/<slug>-<index>.json), counted in the summary, and never shrunk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/campaign/case_check.h"
#include "harness/core/case.h"

namespace collfuzz::campaign {

struct ConfirmPolicy {
  std::int64_t repeats = 5;                          // 0: report every disagreement at once
  std::vector<std::string> always_nondeterministic;  // --confirm-executors
};

// Whether a disagreement of `executor` on `c` is confirmed before it is reported.
bool needs_confirmation(const std::string& executor, const Case& c, const ConfirmPolicy& policy);

struct Confirmation {
  std::int64_t reruns = 0;
  std::int64_t repeated = 0;  // reruns that gave the signature again
  bool flaky() const { return repeated < reruns; }
  nlohmann::json to_json() const;
};

// Reruns `c` up to `repeats` times on `executor` alone and counts the reruns that give
// `signature`; the first rerun that does not give it ends the confirmation (flaky: a rerun of a
// hanging interpret-mode case costs tens of seconds, and the ones left would not change the
// verdict).
// `before_rerun` (may be empty) is called before each rerun: a campaign worker bumps its
// heartbeat there, so reruns of a hanging case are not mistaken for a hung worker.
Confirmation confirm(CaseCheck& check, const Case& c, const std::string& signature,
                     const std::string& executor, std::int64_t repeats,
                     const std::function<void()>& before_rerun = {});

// The executor a signature names (its last field).
std::string signature_executor(const std::string& signature);

// Records a flaky disagreement under <out>/flaky/ (out: the campaign directory).
void record_flaky(const std::filesystem::path& out, const std::string& signature,
                  std::uint64_t seed, std::uint64_t index, const Case& c,
                  const Confirmation& confirmation);

// Every flaky record of the campaign (without its case), sorted by signature: the summary's
// "flaky" list.
nlohmann::json load_flaky(const std::filesystem::path& out);

}  // namespace collfuzz::campaign
