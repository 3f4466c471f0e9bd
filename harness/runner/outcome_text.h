// Outcomes and verdicts as a kernel engineer reads them.
#pragma once

#include <string>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "oracles/verdict.h"

namespace collfuzz {

// With the case, buffers and outputs are also shown as values (element_values.h; "~": a byte no
// copy wrote).
std::string describe_outcome(const Outcome& o, const Case* c = nullptr);
std::string describe_verdict(const Verdict& v);

}  // namespace collfuzz
