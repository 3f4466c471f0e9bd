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
// A run that meets undefined behaviour on either side (kind "undefined"): the same code agrees; an
// executor's undefined run where the reference predicts a defined one is the mismatch
// undefined:behaviour:<code>; a defined run where the reference predicts undefined behaviour is not
// compared (v.ran false, v.reason says why). Returns whether it decided the verdict (the other
// oracles then do not run); false when neither side is undefined or one side rejects (the
// diagnostic oracle's case).
bool undefined_oracle(const Outcome& expected, const Outcome& actual, Verdict& v);
// A stored expectation's undefined behaviour held against the prediction: also where it happens
// (the op and CTA the stored one gives). Executors' reports of where are never compared.
void undefined_where_oracle(const Outcome& stored, const Outcome& predicted, Verdict& v);
// "multicast_outside_cluster at $.program[0].body[0] on CTA 0 (...)".
std::string describe_undefined(const UndefinedRecord& u);

Verdict compare(const Case& c, const Outcome& expected, const Outcome& actual,
                DiagnosticLevel level = DiagnosticLevel::kMessage);

// Messages with their process-specific parts (object addresses) masked, for comparison.
std::string normalize_message(const std::string& message);

}  // namespace collfuzz
