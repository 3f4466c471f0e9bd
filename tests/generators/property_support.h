// What the property tests share: the outcomes of a case on the reference and on the simulator
// (when the `sim` executor is registered), metamorphic transformations of cases, and writing a
// failing case to a file (RapidCheck prints the reproduce string itself).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "harness/executors/executor.h"

namespace collfuzz {

// RapidCheck prints a failing Case as its JSON.
void showValue(const Case& c, std::ostream& os);

namespace properties {

// Outcomes of the mosaic profile: the reference's prediction first, then the simulator's run
// when the sim executor exists.
std::vector<std::pair<std::string, Outcome>> mosaic_outcomes(const Case& c);
std::unique_ptr<Executor> simulator();  // null when no `sim` executor is registered

// Writes `c` to <dir>/<property>.json (dir: $COLLFUZZ_PROPERTY_FAILURES, default
// build/property-failures); the last failing run of a property is its shrunk case.
void write_failing_case(const std::string& property, const Case& c);

// collective_axes of every copy and ClusterBarrier reversed.
Case reverse_collective_axes(Case c);
// Every axis name (declared and referred to) mapped through `rename`.
Case rename_axes(Case c, const std::function<std::string(const std::string&)>& rename);
// Applies `f` to every op of the program.
void for_each_op(Body& body, const std::function<void(Op&)>& f);

}  // namespace properties
}  // namespace collfuzz
