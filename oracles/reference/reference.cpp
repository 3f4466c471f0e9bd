// The driver: the rule families in the order JAX reaches them, then the execution of an accepted
// case. Mosaic: mesh, trace, estimate and module, lower, verify and dialect, compile, launch.
// (finalize: the host-side TMA descriptors). Interpret: mesh, trace, interpret, then the run (whose
// callbacks may still raise).
#include "oracles/reference/reference.h"

#include <optional>

#include "harness/core/pallas_call_dce.h"
#include "harness/core/warp_map.h"

#include "oracles/reference/execution.h"
#include "oracles/reference/interleavings.h"
#include "oracles/reference/rule_families.h"
#include "oracles/reference/undefined_runs.h"

namespace collfuzz {

Prediction predict(const Case& original, Profile profile, bool explain) {
  // A warp_map's body runs once per warp: the rules and the execution see it expanded.
  std::optional<Case> expanded;
  if (has_warp_map(original.program)) expanded = expand_warp_maps(original);
  const Case& c = expanded ? *expanded : original;
  Prediction p;
  ref::Checker ck(c, profile, explain ? &p.steps : nullptr);
  // Interpret mode runs the kernel jaxpr that pl.pallas_call keeps after its dead-code
  // elimination (harness/core/pallas_call_dce.h); the trace rules see the program as written.
  // (The compiler's pallas_call stops at module.pallas_call.no_lowering_rule.)
  std::optional<Case> kept;
  std::optional<ref::Checker> kept_ck;
  std::vector<std::string> removed;
  if (profile == Profile::kInterpret) kept = pallas_call_dce(original, &removed);
  if (kept) {
    for (const std::string& path : removed) {
      ck.notes.push_back("pl.pallas_call's dead-code elimination removes " + path +
                         " (no effect but reads and writes of its own allocations): interpret "
                         "mode never runs it");
    }
    if (has_warp_map(kept->program)) kept = expand_warp_maps(*kept);
    kept_ck.emplace(*kept, profile, explain ? &p.steps : nullptr);
  }
  try {
    ref::check_mesh(ck);
    ref::check_trace(ck);
    if (profile == Profile::kInterpret) {
      ref::Checker& run = kept_ck ? *kept_ck : ck;
      ref::check_interpret(run);
      p.outcome = ref::execute(run);
    } else {
      ref::check_resources(ck);
      ref::check_lowering(ck);
      ref::check_dialect(ck);
      ref::check_finalize(ck);
      ref::check_compile_and_launch(ck);
      p.outcome = ref::execute(ck);
    }
  } catch (const ref::Rejected& r) {
    p.outcome = Outcome{};
    p.outcome.kind = OutcomeKind::kRejected;
    p.outcome.profile = profile;
    p.outcome.executor = "reference";
    p.outcome.diagnostic = r.diagnostic;
    if (profile != Profile::kInterpret) ref::admit_layout_search_exhaustion(*p.outcome.diagnostic);
  } catch (const ref::UndefinedRun& u) {
    p.outcome = ref::undefined_outcome(u, profile);
  }
  p.notes = std::move(ck.notes);
  if (kept_ck) p.notes.insert(p.notes.end(), kept_ck->notes.begin(), kept_ck->notes.end());
  p.outcome.info["rules_jax_version"] = to_string(c.target.jax);
  return p;
}

bool add_interleaving_alternatives(const Case& original, Outcome& predicted) {
  if (predicted.kind != OutcomeKind::kRejected || !predicted.diagnostic ||
      !predicted.diagnostic->alternatives.empty() || predicted.profile != Profile::kInterpret)
    return false;
  const std::optional<Case> kept = pallas_call_dce(original);  // what interpret mode runs
  const Case& run = kept ? *kept : original;
  std::optional<Case> expanded;
  if (has_warp_map(run.program)) expanded = expand_warp_maps(run);
  const Case& c = expanded ? *expanded : run;
  predicted.diagnostic->alternatives = ref::interleaving_alternatives(
      c, predicted.profile, *predicted.diagnostic, {}, &predicted.diagnostic->may_complete);
  return true;
}

}  // namespace collfuzz
