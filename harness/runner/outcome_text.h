// Outcomes and verdicts as a kernel engineer reads them.
#pragma once

#include <string>

#include "harness/core/outcome.h"
#include "oracles/verdict.h"

namespace collfuzz {

std::string describe_outcome(const Outcome& o);
std::string describe_verdict(const Verdict& v);

}  // namespace collfuzz
