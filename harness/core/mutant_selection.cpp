// The run-time selection of a planted bug. Compiled only into the mutant seam
// (collfuzz_mutant_seam), which only the mutant variants of the libraries link.
#ifndef COLLFUZZ_WITH_MUTANTS
#error "mutant_selection.cpp belongs to the mutant build only"
#endif

#include "harness/core/mutants.h"

namespace collfuzz {
namespace {
thread_local Mutant g_active = Mutant::kNone;
}  // namespace

bool mutant_active(Mutant m) { return m != Mutant::kNone && g_active == m; }
void set_active_mutant(Mutant m) { g_active = m; }

}  // namespace collfuzz
