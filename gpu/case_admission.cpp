#include "gpu/case_admission.h"

#include "gpu/plan_encoder.h"
#include "harness/lowering/lowering.h"

namespace collfuzz::gpu {
namespace {

std::string describe(const Diagnostic& d) {
  return d.stage + ": " + d.exception + ": " + d.message;
}

Admission unavailable(std::string reason) {
  Admission a;
  a.kind = Admission::Kind::kUnavailable;
  a.reason = std::move(reason);
  return a;
}

}  // namespace

Admission admit_case(const Case& c, const DeviceBackend& backend) {
  if (std::string why = backend.unavailable_reason(); !why.empty()) {
    return unavailable(std::move(why));
  }
  const std::optional<Arch> arch = backend.target_arch();
  if (!arch || c.target.arch != *arch) {
    return unavailable(std::string("the case targets ") + to_string(c.target.arch) +
                       "; this device runs " + (arch ? to_string(*arch) : "no") +
                       " cases (the CUDA executor never runs a case on another target)");
  }
  lowering::LoweringResult lowered = lowering::lower_case(c);
  if (lowered.diagnostic) {
    if (lowered.diagnostic->stage == "launch") {
      Admission a;
      a.kind = Admission::Kind::kProbeLaunch;
      a.diagnostic = std::move(lowered.diagnostic);
      return a;
    }
    return unavailable("the shared lowering rejects the case (" + describe(*lowered.diagnostic) +
                       "): there is no plan to run on the device");
  }
  EncodeResult enc = encode_plan(lowered.plan);
  if (enc.rejected) {
    Admission a;
    a.kind = Admission::Kind::kRejected;
    a.diagnostic = std::move(enc.rejected);
    return a;
  }
  if (!enc.encoded) return unavailable("the plan needs " + enc.unavailable);
  if (enc.encoded->leader_tracked && *arch != Arch::kSm100a) {
    return unavailable("leader-tracked copies (.cta_group::2) need sm_100a; this device runs " +
                       std::string(to_string(*arch)));
  }
  Admission a;
  a.kind = Admission::Kind::kRun;
  a.encoded = std::move(enc.encoded);
  return a;
}

const char* admission_name(Admission::Kind kind) {
  switch (kind) {
    case Admission::Kind::kRun:
      return "run";
    case Admission::Kind::kProbeLaunch:
      return "probe_launch";
    case Admission::Kind::kRejected:
      return "rejected";
    case Admission::Kind::kUnavailable:
      return "unavailable";
  }
  return "unavailable";
}

}  // namespace collfuzz::gpu
