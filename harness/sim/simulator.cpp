#include "harness/sim/simulator.h"

#include "harness/lowering/lowering.h"
#include "harness/sim/cluster_simulator.h"

namespace collfuzz::sim {

Outcome Simulator::run(const Case& c) {
  const lowering::LoweringResult lowered = lowering::lower_case(c);
  Outcome o;
  if (lowered.diagnostic) {
    o.kind = OutcomeKind::kRejected;
    o.diagnostic = lowered.diagnostic;
  } else {
    o = simulate_plan(lowered.plan, memory_);
  }
  o.profile = Profile::kMosaic;
  o.info["lowering_jax_version"] = lowering::kLoweringJaxVersion;
  return o;
}

}  // namespace collfuzz::sim
