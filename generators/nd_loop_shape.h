// How a generated indexed loop becomes a `plgpu.nd_loop` (docs/case-format.md, "nd_loop"): the
// grid's steps dealt out over a varying axis, the grid index picking the tile where the loop's
// index did, each thread running its own number of trips (an uneven grid leaves some threads a
// trip short: a collective op in the body then waits for a peer that never comes).
#pragma once

#include <cstdint>

#include "generators/axis_environment.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

enum class NdTiling : std::uint8_t {
  kNone,
  kDividing,    // tiling=(d,) with d dividing the grid
  kWrongRank,   // tiling of another length than the grid (trace.nd_loop.tiling_length)
  kNotDividing  // (trace.nd_loop.tiling_divides)
};

struct NdLoopPlan {
  std::int64_t extra_steps = 0;  // grid = trips * axis size + extra_steps (clamped below the size)
  NdTiling tiling = NdTiling::kNone;
  bool axes_tuple = false;  // collective_axes=("x",) rather than "x"
  // An even grid as (G / 2, 2): the tile is (i, j)'s flat index i * 2 + j, which a tiling of
  // (2, 1) visits in another order than the steps.
  bool two_dims = false;
};

// The grid an nd_loop of `trips` trips per thread over an axis of `axis_size` has under `plan`.
std::int64_t nd_grid_size(const NdLoopPlan& plan, std::int64_t trips, std::int64_t axis_size);

// Makes `loop` (its body reading the grid index `grid_index`, its slots the local index
// `loop.index`) an nd_loop over `axis` with a grid of `grid_size` steps; call attach_nd_coords
// once its body is complete.
void make_nd_loop(Loop& loop, const NdLoopPlan& plan, const NamedAxis& axis, std::int64_t grid_size,
                  const std::string& grid_index);

// Once the nd_loop's body is complete: a 2-d grid's flat index written over its two coordinates,
// and the coordinates attached to the index terms that read them (attach_nd_coords).
void finish_nd_loop(Loop& loop);

}  // namespace collfuzz::generators
