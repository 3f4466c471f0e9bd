// The kernel as pl.pallas_call keeps it: pallas_call._trace_kernel_to_jaxpr runs pe.dce_jaxpr over
// the traced kernel jaxpr, which removes every equation without outputs in use and without an
// effect other than reads. copy_gmem_to_smem has {ReadEffect(src), WriteEffect(dst)}, and
// run_scoped discharges the effects on its own allocations, so a run_scoped whose body only reads
// inputs and writes its own SMEM (no barrier op, commit, wait or store to an output or to an
// allocation outside it: those carry gpu_core._memory_effect or an outer WriteEffect) is removed
// whole: nothing in it is interpreted, lowered or run, and its allocations take no SMEM. The
// DCE rules of cond (pl.when) and scan (lax.fori_loop) apply it inside their bodies too; a
// run_scoped or a warp_map that stays is kept whole. plgpu.kernel's mpmd_map keeps its body as
// traced. Tracing (and so the trace-stage rules) sees the program before this.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

// `c` with the ops pallas_call's DCE removes taken out (paths unchanged), their paths into
// `removed` when given; nullopt when the DCE removes nothing (a plgpu.kernel, or a pallas_call
// whose every op has an effect), so that a caller runs `c` itself.
std::optional<Case> pallas_call_dce(const Case& c, std::vector<std::string>* removed = nullptr);

}  // namespace collfuzz
