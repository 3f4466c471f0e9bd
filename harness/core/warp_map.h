// The warp-level context (docs/case-format.md, "warp_map"): `pl.core_map(plgpu.WarpMesh(...))`
// inside a kernel. Its body runs on each of the 4 warps of the warpgroup. Under either lowering
// semantics (Warpgroup lowers it to the dialect's warp_map op) a copy issued by one warp arrives on
// its barrier as a warpgroup-level copy does: each of the warp's 32 lanes arrives 4 times (128
// hardware arrivals, one Pallas arrival) and expects bytes/32, and one lane issues the TMA; an
// arrival is 4 per lane likewise. A copy or an arrival that n warps reach is issued n times (JAX:
// "The arrival counts are wrong if called outside of a single warp").
//
// The reference and the lowering see a case with its warp_maps expanded: each becomes a
// When(true) (Op::from_warp_map) holding one copy of its body per warp, in warp order, with
// lax.axis_index of the warp axis replaced by the warp's index; every op inside carries
// Op::warp_axis and Op::warp (its warp). The order changes no count because a warp_map's body
// holds no wait (the parser refuses one) and copies and arrivals are asynchronous; what it can
// change is whether a copy's no-complete arrivals complete a phase, which the reference searches
// every order for (oracles/reference/execution_warp_arrivals.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz {

inline constexpr std::int64_t kWarpsPerWarpgroup = 4;  // WarpMesh._NUM_WARPS_PER_WARPGROUP

// Parse-time checks of the modelled subset; each throws InputError naming the path.
// An op of kind `kind` at `path` inside a warp_map: no barrier_wait, no copy_smem_to_gmem.
void check_in_warp_map(const std::string& kind, const std::string& path);
// A dynamic slice start on the warp axis stays inside the source for every warp; a run_scoped
// inside holds no allocation and no collective_axes (Mosaic GPU refuses any run_scoped there;
// interpret mode allocates per warp, which is not modelled).
void check_warp_map_body(const WarpMap& wm, const std::vector<ArraySpec>& inputs);

bool has_warp_map(const Body& program);

// Whether evaluating `cond` computes lax.not_ (a `not` of a traced condition: jnp.logical_not);
// a `not` of constants folds in Python. Under (Warpgroup, PrimitiveSemantics.Warp) Mosaic GPU has
// no lowering rule for `not` (nor `neg`), so a warp's condition or predicate holding one fails.
bool cond_computes_not(const Cond& cond);

// The case with every warp_map expanded (above). A bound warp index is a traced constant
// (Cond::traced): JAX traces and lowers a pl.when on it whatever its value. A warp_map nested in
// another is a When(true) marked from_warp_map with the outer axis, holding one copy of its body
// (warp 0's), since JAX traces the body before it rejects the nesting at lowering or
// interpretation.
Case expand_warp_maps(const Case& c);

}  // namespace collfuzz
