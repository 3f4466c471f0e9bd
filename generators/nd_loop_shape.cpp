#include "generators/nd_loop_shape.h"

#include <algorithm>

#include "harness/core/loop_index.h"

namespace collfuzz::generators {

std::int64_t nd_grid_size(const NdLoopPlan& plan, std::int64_t trips, std::int64_t axis_size) {
  return trips * axis_size + std::clamp<std::int64_t>(plan.extra_steps, 0, axis_size - 1);
}

void make_nd_loop(Loop& loop, const NdLoopPlan& plan, const NamedAxis& axis, std::int64_t grid_size,
                  const std::string& grid_index) {
  Loop::Nd nd;
  nd.grid = {grid_size};
  nd.index_names = {grid_index};
  if (plan.two_dims && grid_size % 2 == 0) {
    nd.grid = {grid_size / 2, 2};
    nd.index_names = {grid_index, grid_index + "_minor"};
  }
  nd.axes = {axis.name.as_plain()};
  nd.axes_tuple = plan.axes_tuple;
  nd.axis_sizes = {axis.size};
  nd.axis_size = axis.size;
  switch (plan.tiling) {
    case NdTiling::kNone:
      break;
    case NdTiling::kDividing:
      if (nd.grid.size() == 2) {
        // (2, 1) unravels step s to (s % 2 + s // 4 * 2, s // 2 % 2): the tiles in another order
        // than the steps (a tiling of (1, 2) would keep theirs).
        nd.tiling = {nd.grid[0] % 2 == 0 ? 2 : 1, 1};
      } else {
        std::int64_t d = std::min<std::int64_t>(grid_size, 4);
        while (grid_size % d != 0) --d;
        nd.tiling = {d};
      }
      break;
    case NdTiling::kWrongRank:
      nd.tiling = Shape(nd.grid.size() + 1, 1);
      break;
    case NdTiling::kNotDividing:
      nd.tiling = nd.grid;
      nd.tiling.back() += 1;
      break;
  }
  loop.trip_count = nd.trips(0);
  loop.nd = std::move(nd);
}

namespace {

// i * m (+ a) becomes i * 2m + j * m (+ a): the flat index of (i, j) in a (G / 2, 2) grid.
void flatten_entry(IndexEntry& e, const std::string& major, const std::string& minor) {
  if (!e.dyn_start || !e.dyn_start->loop || e.dyn_start->axis != major) return;
  DynStart& d = *e.dyn_start;
  d.plus.push_back(DynTerm{minor, d.mul, true});
  d.mul *= 2;
}

void flatten_body(Body& body, const std::string& major, const std::string& minor) {
  const auto index = [&](std::vector<IndexEntry>& entries) {
    for (IndexEntry& e : entries) flatten_entry(e, major, minor);
  };
  for (Op& op : body) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) index(cp->src_index);
    if (auto* st = std::get_if<CopySmemToGmem>(&op.v)) index(st->dst_index);
    if (auto* vs = std::get_if<VectorStore>(&op.v)) {
      index(vs->dst_index);
      for_each_vector_load(vs->value, [&](VectorValue& load) {
        if (load.kind == VectorKind::kLoadInput) index(load.gmem_index);
      });
    }
    if (Body* inner = nested_body(op)) flatten_body(*inner, major, minor);
  }
}

}  // namespace

void finish_nd_loop(Loop& loop) {
  if (loop.nd && loop.nd->grid.size() == 2)
    flatten_body(loop.body, loop.nd->index_names[0], loop.nd->index_names[1]);
  attach_nd_coords(loop);
}

}  // namespace collfuzz::generators
