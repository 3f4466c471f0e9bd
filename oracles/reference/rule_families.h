// One function per rule family, each checking the rules of rules.def that one part of JAX
// enforces, in the order JAX enforces them. reference.cpp calls them in stage order.
#pragma once

#include "oracles/reference/checker.h"
#include "oracles/reference/copy_facts.h"

namespace collfuzz::ref {

// mesh: plgpu.Mesh.__post_init__.
void check_mesh(Checker& ck);
// trace: allocation constructors, copy_gmem_to_smem's Python check and abstract evaluation.
void check_trace(Checker& ck);
// interpret: GPU interpret mode's checks while it interprets the kernel jaxpr.
void check_interpret(Checker& ck);
// estimate + module: the whole-kernel resource estimate, then kernel-level checks.
void check_resources(Checker& ck);
// lower: run_scoped, copy and barrier lowering rules in program order (Lane semantics raise the
// launch-context errors here too).
void check_lowering(Checker& ck);
// verify + dialect: under Warpgroup semantics, MLIR verification and the dialect lowering.
void check_dialect(Checker& ck);
// finalize: the host-side TMA descriptors, built after the dialect lowering.
void check_finalize(Checker& ck);
// compile + launch.
void check_compile_and_launch(Checker& ck);

// The warp-level context (warp_rules.cpp), for one op of the expanded program: at the lower stage
// (in the lowering walk, before the op's own rules), and in interpret mode's walk.
struct Scope;
void check_warp_context_lowering(Checker& ck, const Op& op, const Scope& scope);
// Under Warpgroup semantics: the dialect lowering of a warp's ops (stage dialect, program order).
void check_warp_context_dialect(Checker& ck, const Op& op, const Scope& scope);
void check_warp_context_interpret(Checker& ck, const Op& op);

// SMEM transforms (smem_transform_rules.cpp): an allocation's SwizzleTransform constructor (in
// argument order with the other constructors), then a run_scoped's refs' avals (trace); a copy's
// slice of a tiled SMEM ref, `dim` the sliced dim of `a` (its lowering rule, before anything
// else of the copy).
void check_alloc_transform_constructors(Checker& ck, const Op& op, const Alloc& a);
void check_alloc_transforms(Checker& ck, const Op& op, const RunScoped& rs);
void check_smem_slice_tiles(Checker& ck, const Op& op, const Alloc& a, std::size_t dim,
                            const std::optional<IndexEntry>& slice);

// The launch-context checks of one TMA or cp.async copy (LaunchContext.async_copy), fired at
// `stage` (lower under Lane, dialect under Warpgroup).
void check_launch_context(Checker& ck, const CopyFacts& f, Stage stage);
// The same for a copy_smem_to_gmem (always the TMA implementation).
void check_store_launch_context(Checker& ck, const CopyFacts& f, Stage stage);

// The Lane register layout of each loop-carried value in view by name, as the walk in program
// order meets them: its vector length, or nullopt for a splat (init's inside the loop, next's
// after it).
using CarryLayouts = std::map<std::string, std::optional<std::int64_t>>;

// A vector store's lowering rules (vector_rules.cpp), fired at `stage`: lower (under Lane all of
// its value's and the store's; under Warpgroup an iota's layout cast), or dialect (Warpgroup).
void check_vector_store_lowering(Checker& ck, const Op& op, const VectorStore& vs,
                                 const Scope& scope, Stage stage, const CarryLayouts& carries);
// A loop's carried value (vector_rules.cpp), at `stage` as a vector store's: before the loop's
// body (`after_body` false) its init's rules, after it its next's and, under Lane with two trips
// or more, lower.loop.carry_layout; keeps the carry's layout in `carries`. Any other op: nothing.
void check_loop_carry_lowering(Checker& ck, const Op& op, const Scope& scope, Stage stage,
                               bool after_body, CarryLayouts& carries);
// Warpgroup's layout inference, over the whole module before the dialect lowering of any op: a
// vector store of no multiple of 128 elements whose value loads a ref (vector_rules.cpp).
void check_vector_layout_inference(Checker& ck);

// plgpu.try_cluster_cancel (cluster_cancel_rules.cpp): its lowering rule's result size (stage
// lower) and, under Warpgroup, the dialect op's verification of the result ref (stage verify).
void check_try_cluster_cancel_lowering(Checker& ck, const Op& op, const TryClusterCancel& tc,
                                       const Scope& scope);
void check_try_cluster_cancel_verify(Checker& ck, const Op& op, const TryClusterCancel& tc,
                                     const Scope& scope);
// The whole layout inference pass (layout_inference_rules.cpp): a TMA copy's proven GMEM slice
// against its tiled SMEM ref, its diagnosis, then the generic message (vector values included).
void check_layout_inference(Checker& ck);
// A diagnostic of the layout inference's unsatisfiable system (the rules it raises after
// find_assignments_for's search ends without a solution) also admits the search's running out of
// fuel first (layout_inference_rules.cpp). Anything else is left as is.
void admit_layout_search_exhaustion(Diagnostic& d);

}  // namespace collfuzz::ref
