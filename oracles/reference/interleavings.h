// Interpret mode's run-time barrier errors under interleavings other than the canonical one
// (issue 27). GPU interpret mode runs every Pallas thread of every CTA as a Python thread, and
// the error a run reports is the first one any thread records (JAX 0.11.2 and 0.12.0.1,
// pallas/mosaic/interpret/shared_memory.py SharedMemory.set_failed keeps the first failure). The
// barrier checks (pallas/mosaic_gpu/interpret/shared_memory.py) name "whichever thread" broke an
// invariant first:
//   - Barrier.arrive: missed_phase names the first thread, in the order threads first finished a
//     wait on the barrier (the dict last_observed_phase_by_thread), that is two phases behind;
//   - Barrier._wait: first_wait_late and wait_late name the waiting thread and the phase the
//     barrier had reached when it came;
//   - Barrier.deallocate (0.11.2): dealloc_unobserved names the first thread, in the same dict
//     order, that did not observe the last phase, on whichever CTA's barrier goes first;
//   - BarrierReallocationChecker (0.12.0.1): realloc_unobserved names the thread that allocates
//     first, or the first of a set of threads when the barrier's last holder leaves.
// Which thread that is, and at which phase, depends on how the threads interleave wherever the
// program does not order them (a racy use of a barrier).
//
// The reference predicts its canonical schedule's error (docs/outcome-format.md, "Execution
// model") and, with this, the other errors that other schedules raise first: it runs the same
// execution under other legal schedules and keeps what they raise. Every error listed is one a
// schedule raises, so one JAX's threads can produce (the execution takes each callback as one
// atomic step, as JAX's locks make it); the list is not proven complete (see below).
//
// Schedules: when no CTA touches another's barriers (no ClusterBarrier: interpret mode's copies
// arrive on their own CTA's barrier) nor names another through plgpu.cluster_ref (whose refusal
// carries the index each CTA computed), each CTA runs alone (any CTA may run first and fail first),
// and CTAs whose threads run the same steps are explored once, the others' errors being the same
// with the CTA's block_id. Otherwise all threads run together. In both, the schedules are: the
// round-robin from each thread; step-by-step random orders; the round-robin with one thread
// preempted after each of its steps; up to a budget of runs.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::ref {

struct InterleavingBudget {
  std::size_t max_runs = 1024;        // executions, all CTA classes together
  std::size_t random_schedules = 32;  // step-by-step random orders per unit explored
};

// The run-time errors that schedules other than the canonical one raise first, other than
// `canonical` itself, sorted by rule and message (at most limits::kMaxDiagnosticAlternatives).
// `c` is the case as the reference executes it (warp maps expanded); `canonical` is the error
// its canonical schedule raised, at stage run. Explored for the run.barrier.* rules, and for any
// other run-time error where the CTAs do not all run the same steps (another kind of CTA may fail
// first with an error of its own); empty otherwise.
// `may_complete`, when given, is set to whether the schedules explored include, for every CTA
// (or for all threads together where CTAs share barriers), one that raises no error and
// completes: then the kernel may also complete.
std::vector<DiagnosticAlternative> interleaving_alternatives(const Case& c, Profile profile,
                                                             const Diagnostic& canonical,
                                                             const InterleavingBudget& budget = {},
                                                             bool* may_complete = nullptr);

}  // namespace collfuzz::ref
