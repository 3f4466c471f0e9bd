// Turns what the interpreter kernel wrote for one case (its results, gpu/device_plan.h) into an
// Outcome, reporting only what was observed: every wait's completion or timeout, every SMEM
// buffer's bytes at its last read-back, every output's bytes and the elements stores wrote.
// Barrier counters (arrivals, bytes armed and received, pending, tx) cannot be read from an
// mbarrier, so no barrier record is reported: the byte oracle counts them unobserved.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gpu/encoded_case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

struct DecodeOptions {
  std::string executor = "cuda";
  double timeout_ms = 100;                  // the wait budget, for the timeout reason
  std::map<std::string, std::string> info;  // device facts for every outcome
};

// `results` points at the case's results (its results_base in the batch's results arena).
Outcome decode_outcome(const EncodedCase& c, const std::uint8_t* results,
                       const DecodeOptions& options);

}  // namespace collfuzz::gpu
