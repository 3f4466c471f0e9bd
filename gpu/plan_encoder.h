// Turns the shared lowering's plan of an accepted case into the CUDA executor's device tables.
// A plan that the hardware can only run as undefined behaviour (an mbarrier count or a tx-count
// out of the mbarrier's range, a multicast or remote arrival to a CTA outside the cluster, a bulk
// copy that breaks cp.async.bulk's 16-byte rules or reads outside the input's guard band) is not
// encoded: the reason says why, and the executor reports the case `unavailable` with it. A tensor
// map that Mosaic GPU's runtime would refuse to build is the `abort` it would end in, at stage
// `launch`.
#pragma once

#include <optional>
#include <string>

#include "gpu/encoded_case.h"
#include "harness/core/outcome.h"
#include "harness/lowering/plan.h"

namespace collfuzz::gpu {

// Bytes around every input in the device's input arena that a bulk copy may read (their contents
// are undefined, as out-of-bounds bytes are).
inline constexpr std::int64_t kInputGuardBytes = 4096;

struct EncodeResult {
  std::optional<EncodedCase> encoded;
  std::optional<Diagnostic> rejected;  // the runtime's abort, when `encoded` is empty
  std::string unavailable;             // otherwise why not, when `encoded` is empty
};

EncodeResult encode_plan(const lowering::Plan& plan);

}  // namespace collfuzz::gpu
