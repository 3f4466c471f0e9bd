#include "gpu/case_admission.h"

#include "gpu/plan_encoder.h"
#include "harness/lowering/lowering.h"
#include "harness/sim/cluster_simulator.h"

namespace collfuzz::gpu {
namespace {

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
    return unavailable("the shared lowering rejects the case (" +
                       stage_exception_message(*lowered.diagnostic) +
                       "): there is no plan to run on the device");
  }
  EncodeResult enc = encode_plan(lowered.plan);
  if (enc.rejected) {
    Admission a;
    a.kind = Admission::Kind::kRejected;
    a.diagnostic = std::move(enc.rejected);
    return a;
  }
  // The plan's run on the CPU simulator (after the runtime's aborts, which come before the
  // launch): undefined behaviour the simulator names (a multicast or a cluster-barrier arrival
  // outside the cluster, an mbarrier count out of range) is the executor's outcome, without a
  // launch; an over-arrival is checked below.
  sim::DeviceMemory memory;
  const Outcome cpu = sim::simulate_plan(lowered.plan, memory);
  if (cpu.kind == OutcomeKind::kUndefined && cpu.undefined) {
    Admission a;
    a.kind = Admission::Kind::kUndefined;
    a.undefined = cpu.undefined;
    return a;
  }
  if (!enc.encoded) return unavailable("the plan needs " + enc.unavailable);
  if (enc.encoded->leader_tracked && *arch != Arch::kSm100a) {
    return unavailable("leader-tracked copies (.cta_group::2) need sm_100a; this device runs " +
                       std::string(to_string(*arch)));
  }
  // An arrival on a phase with no pending arrival is undefined behaviour on hardware (the
  // emulator refuses it too): the plan's CPU run shows it as a pending count below zero. (The
  // simulator gives it a meaning, as the reference does: the executor declines the case.)
  for (const CtaRecord& cta : cpu.ctas) {
    for (const BarrierRecord& b : cta.barriers) {
      if (b.pending && *b.pending < 0) {
        return unavailable(
            "undefined behaviour on hardware: barrier " + b.alloc + "[" + std::to_string(b.index) +
            "] of CTA " + std::to_string(cta.rank) +
            " gets an arrival on a phase with no pending arrival (the plan's run on the CPU "
            "simulator)");
      }
    }
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
    case Admission::Kind::kUndefined:
      return "undefined";
  }
  return "unavailable";
}

}  // namespace collfuzz::gpu
