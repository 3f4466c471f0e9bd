// What the CUDA executor does with a case on a given device, decided before anything is launched:
// run its plan, try the launch that the lowering predicts the device refuses, report Mosaic GPU's
// runtime abort (a tensor map it would not build), or say why it is unavailable (another target,
// no plan, a plan that is undefined behaviour on hardware (an over-arrival its CPU simulation
// shows), .cta_group::2 without sm_100a). The case pipeline admits every case through it, and
// `collfuzz-cuda-worker --declare` prints it, so the GPU check's required cases are exactly those
// the executor says it runs.
#pragma once

#include <optional>
#include <string>

#include "gpu/device_backend.h"
#include "gpu/encoded_case.h"
#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

struct Admission {
  enum class Kind : std::uint8_t {
    kRun,          // `encoded` is launched
    kProbeLaunch,  // the lowering predicts a launch failure (`diagnostic`): the device is asked
    kRejected,     // Mosaic GPU's runtime aborts before the launch (`diagnostic`)
    kUnavailable,  // `reason`
    kUndefined,    // the plan's run meets undefined behaviour (`undefined`): not launched
  };
  Kind kind = Kind::kUnavailable;
  std::string reason;
  std::optional<Diagnostic> diagnostic;
  std::optional<EncodedCase> encoded;
  std::optional<UndefinedRecord> undefined;
};

Admission admit_case(const Case& c, const DeviceBackend& backend);

// "run", "probe_launch", "rejected", "unavailable" or "undefined".
const char* admission_name(Admission::Kind kind);

}  // namespace collfuzz::gpu
