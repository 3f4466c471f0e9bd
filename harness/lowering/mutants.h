// The planted bugs of the lowering and the simulator: the mutant registry of harness/core/mutants.h
// (one list for every mutant), in the lowering's namespace.
#pragma once

#include "harness/core/mutants.h"

namespace collfuzz::lowering {

using collfuzz::kMutantsCompiled;
using collfuzz::Mutant;
using collfuzz::mutant_active;
using collfuzz::mutant_name;
using collfuzz::parse_mutant;
#ifdef COLLFUZZ_WITH_MUTANTS
using collfuzz::set_active_mutant;
#endif

}  // namespace collfuzz::lowering
