// Predicting what an accepted case does: every Pallas thread of every CTA runs the program under
// the canonical schedule (docs/outcome-format.md), with the byte accounting and data placement of
// each copy mode as the spec states them (spec 3.5 for the compiler, spec 4 for interpret mode).
#pragma once

#include "harness/core/outcome.h"
#include "oracles/reference/checker.h"

namespace collfuzz::ref {

// May throw Rejected for a run-time diagnostic (interpret mode's callbacks).
Outcome execute(Checker& ck);

}  // namespace collfuzz::ref
