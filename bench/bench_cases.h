// The cases the benchmarks run: one copy per CTA of an f32 tile into SMEM, multicast over the
// whole cluster along one axis, then a barrier wait; parameterised by the tile's bytes per CTA and
// the cluster size.
#pragma once

#include <cstdint>

#include "harness/core/case.h"

namespace collfuzz::bench {

// A (tile_bytes / 256) x 64 f32 tile, multicast over a cluster of `ctas` CTAs (ctas == 1: a plain
// copy). tile_bytes is a multiple of 256 * ctas.
Case multicast_tile_case(std::int64_t tile_bytes, std::int64_t ctas);

// A reused barrier over `steps` steps: each step multicasts a 4 KiB f32 tile over a 2-CTA cluster
// and waits on the same barrier (its phase flips every step). `as_loop`: one `loop` op of trip
// count `steps` (fori_loop); otherwise the same `steps` copy-and-wait pairs written out.
// `tiled`: step k copies tile k of a source of `steps` tiles (the loop reads pl.ds(i * 16, 16)
// through its index, the straight-line steps pl.ds(16 * k, 16)).
Case reused_barrier_case(std::int64_t steps, bool as_loop, bool tiled, bool nd = false);

// Benchmark argument lists: {tile bytes, cluster size}.
inline constexpr std::int64_t kSmallTile = 4 * 1024;
inline constexpr std::int64_t kLargeTile = 64 * 1024;

}  // namespace collfuzz::bench
