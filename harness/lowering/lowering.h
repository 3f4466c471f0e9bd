// The lowering shared by the CPU simulator and the CUDA executor: a case goes through what
// Pallas Mosaic GPU (JAX 0.11.2, profile `mosaic`) does to it, stage by stage, and either fails
// with the diagnostic JAX raises first, or yields the plan every CTA and thread executes.
// Written procedurally from JAX's source, independently of the reference checker.
#pragma once

#include <optional>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "harness/lowering/plan.h"

namespace collfuzz::lowering {

// The JAX release whose compiler this lowering follows.
inline constexpr const char* kLoweringJaxVersion = "0.11.2";

struct LoweringResult {
  std::optional<Diagnostic> diagnostic;  // set: rejected
  Plan plan;                             // otherwise: what runs
};

LoweringResult lower_case(const Case& c);

}  // namespace collfuzz::lowering
