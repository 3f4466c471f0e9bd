// Runs that were not compared, by reason. A run that meets undefined behaviour is an outcome of
// kind "undefined" with a code (harness/core/undefined_behaviour.def), which the oracles hold
// against the reference's prediction (oracles/undefined_oracle.cpp, through compare()): an
// executor's undefined run where the reference predicts a defined outcome is the disagreement
// undefined:behaviour:<code>:<executor>; the same code on both sides agrees; a defined run where
// the reference predicts undefined behaviour is not compared. This file names what the campaign
// counts: every unavailable or not-compared run per executor and per reason (its text with numbers
// as N), for the summary.
#pragma once

#include <string>

namespace collfuzz::campaign {

// An unavailable run's reason without its case-specific numbers (digit runs become N), at most
// 160 characters: the key the summary counts it under.
std::string unavailable_reason_class(const std::string& reason);

}  // namespace collfuzz::campaign
