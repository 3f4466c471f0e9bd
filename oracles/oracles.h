// The three oracles. Each compares a reference outcome (`expected`) with an executor's (`actual`)
// and appends its mismatches to a verdict. `compare` runs all three.
#pragma once

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "oracles/verdict.h"

namespace collfuzz {

void diagnostic_oracle(const Outcome& expected, const Outcome& actual, DiagnosticLevel level,
                       Verdict& v);
void byte_oracle(const Case& c, const Outcome& expected, const Outcome& actual, Verdict& v);
void memory_oracle(const Case& c, const Outcome& expected, const Outcome& actual, Verdict& v);

Verdict compare(const Case& c, const Outcome& expected, const Outcome& actual,
                DiagnosticLevel level = DiagnosticLevel::kMessage);

// Messages with their process-specific parts (object addresses) masked, for comparison.
std::string normalize_message(const std::string& message);

}  // namespace collfuzz
