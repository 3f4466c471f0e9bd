// The reference checker: the specification as code. For a case and a profile it predicts the
// diagnostic a compliant implementation raises, or what the accepted kernel does.
#pragma once

#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "oracles/reference/checker.h"

namespace collfuzz {

struct Prediction {
  Outcome outcome;
  std::vector<ref::ExplainStep> steps;  // filled when explaining: every rule checked, in order
  std::vector<std::string> notes;       // filled when explaining: races the execution met
};

Prediction predict(const Case& c, Profile profile, bool explain = false);

// For an interpret-mode prediction of `c` that raises a run-time barrier error: fills the
// diagnostic's alternatives, the errors other interleavings of its threads raise first
// (oracles/reference/interleavings.h). Up to 1024 executions, so predict() leaves them out:
// compare() adds them when an executor's error is not the canonical one, `collfuzz run` to show
// them. Returns false, changing nothing, for any other prediction or one that has them.
bool add_interleaving_alternatives(const Case& c, Outcome& predicted);

// The JAX version whose behaviour the rule table follows.
// The release a case is judged by when nothing pins one (harness/core/jax_version.h).
inline constexpr const char* kRulesJaxVersion = "0.11.2";

}  // namespace collfuzz
