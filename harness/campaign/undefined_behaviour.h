// Undefined behaviour as a finding, and unavailable runs by reason. The simulator answers a run
// that meets undefined behaviour (a multicast or a cluster-barrier arrival that leaves the
// cluster, an mbarrier.init count out of range) with an "unavailable" outcome. When the reference
// predicts a defined outcome for that case, one of the two is wrong: the campaign reports it as a
// disagreement (undefined:behaviour:<what>:<executor>) instead of letting the run vanish. Every
// other unavailable run is counted per executor and per reason (its text with numbers as N), for
// the summary.
#pragma once

#include <optional>
#include <string>

#include "harness/core/outcome.h"
#include "oracles/verdict.h"

namespace collfuzz::campaign {

// The mismatch when `actual` (run by `executor`) met undefined behaviour and `expected` is
// defined; nullopt otherwise.
std::optional<Mismatch> undefined_behaviour_mismatch(const Outcome& expected, const Outcome& actual,
                                                     const std::string& executor);

// An unavailable run's reason without its case-specific numbers (digit runs become N), at most
// 160 characters: the key the summary counts it under.
std::string unavailable_reason_class(const std::string& reason);

}  // namespace collfuzz::campaign
