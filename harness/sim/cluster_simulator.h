// Executes a plan over every CTA of the modelled cluster with the canonical schedule of
// docs/outcome-format.md at hardware granularity: threads are visited in order (CTA rank, then
// Pallas thread); each runs until it blocks on a parity wait or a block-wide bar.sync, or
// finishes; a warpgroup-level step executes its lanes' actions in lane order, atomically; a
// transfer's data and its complete_tx land at issue time in every receiving CTA. When no thread
// can move the run is a deadlock, reported with every barrier's state, never a hang. An arrival on
// a phase with no pending arrival left drives the pending count below zero, and that phase never
// completes (as with a hardware counter that wraps). Undefined behaviour the model cannot give a
// meaning to (a multicast to a CTA outside the cluster, an mbarrier count out of range) makes the
// outcome `unavailable` with the reason.
#pragma once

#include "harness/core/outcome.h"
#include "harness/lowering/plan.h"
#include "harness/sim/device_memory.h"

namespace collfuzz::sim {

Outcome simulate_plan(const lowering::Plan& plan, DeviceMemory& memory);

}  // namespace collfuzz::sim
