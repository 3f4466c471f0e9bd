// plgpu.try_cluster_cancel in a generated scope (docs/case-format.md, "try_cluster_cancel"): a
// result ref, a barrier of its own armed by every Pallas thread of the scope, the request, and
// the wait for the response.
#pragma once

#include <string>

#include "generators/axis_environment.h"
#include "generators/scope_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

// Appends the plan's allocations ("cres" + suffix, "ccbar" + suffix) and ops to `rs`. The
// barrier counts one arrival per Pallas thread of a CTA; whether the responses balance what each
// CTA arms is the plan's axes' doing (kNone and kFirstClusterAxis over several CTAs do not).
void append_cluster_cancel(RunScoped& rs, const ClusterCancelPlan& plan, const AxisEnvironment& env,
                           const std::string& suffix);

}  // namespace collfuzz::generators
