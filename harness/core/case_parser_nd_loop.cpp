// The case reader: `plgpu.nd_loop` (docs/case-format.md, "nd_loop"), a loop over a grid whose
// steps are dealt out to the threads of its collective axes, each thread running its own number of
// trips (case_parser.h).

#include <memory>

#include "harness/core/case_parser.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"
#include "harness/core/loop_index.h"

namespace collfuzz::case_json {

namespace {

constexpr std::size_t kMaxNdRank = 4;
constexpr std::int64_t kMaxNdDim = 1 << 16;
constexpr std::int64_t kMaxNdGridSize = 1 << 16;

Shape parse_nd_dims(const json& j, const std::string& path) {
  jr::array(j, path, kMaxNdRank);
  if (j.empty()) throw InputError(path, "expected 1 to 4 dims");
  Shape out;
  for (std::size_t k = 0; k < j.size(); ++k)
    out.push_back(jr::integer(j[k], jr::index_path(path, k), 1, kMaxNdDim));
  return out;
}

}  // namespace

Loop CaseParser::parse_nd_loop(const json& j, const std::string& path, int depth) {
  jr::object(j, path,
             {"op", "grid", "collective_axes", "tiling", "index", "local_index", "carry", "body"});
  if (in_loop_) {
    throw InputError(path + ".op",
                     "loops do not nest (a loop's body holds copies, waits, "
                     "arrivals and when)");
  }
  Loop l;
  Loop::Nd nd;
  nd.grid = parse_nd_dims(jr::required(j, path, "grid"), path + ".grid");
  std::int64_t steps = 1;  // checked dim by dim: four dims of 2^16 would overflow the product
  for (const std::int64_t d : nd.grid) {
    steps *= d;
    if (steps > kMaxNdGridSize) {
      throw InputError(path + ".grid",
                       "the grid has more than " + std::to_string(kMaxNdGridSize) + " steps");
    }
  }
  // JAX tests `if tiling:`: an empty tuple is no tiling, as None is.
  if (const json* t = jr::member(j, "tiling"); t && !t->is_null() && !(t->is_array() && t->empty()))
    nd.tiling = parse_nd_dims(*t, path + ".tiling");
  const json& axes = jr::required(j, path, "collective_axes");
  const std::string axes_path = path + ".collective_axes";
  nd.axes_tuple = axes.is_array();
  if (nd.axes_tuple) {
    jr::array(axes, axes_path, 3);
    if (axes.empty()) throw InputError(axes_path, "expected 1 to 3 axis names");
    for (std::size_t k = 0; k < axes.size(); ++k)
      nd.axes.push_back(jr::identifier(axes[k], jr::index_path(axes_path, k)));
  } else {
    nd.axes.push_back(jr::identifier(axes, axes_path));
  }
  for (std::size_t k = 0; k < nd.axes.size(); ++k) {
    const std::string ap = nd.axes_tuple ? jr::index_path(axes_path, k) : axes_path;
    for (std::size_t m = 0; m < k; ++m) {
      if (nd.axes[m] == nd.axes[k]) throw InputError(ap, "\"" + nd.axes[k] + "\" appears twice");
    }
    const std::optional<std::int64_t> size = check_index_axis(nd.axes[k], ap);
    if (!size) {
      throw InputError(ap, "the mesh gives the axis \"" + nd.axes[k] +
                               "\" no size; an nd_loop deals its steps out over the axis's size");
    }
    nd.axis_sizes.push_back(*size);
    nd.axis_size *= *size;
  }
  l.trip_count = nd.trips(0);  // the thread of axis index 0 runs the most trips
  if (l.trip_count > kMaxTripCount) {
    throw InputError(path + ".grid", "a thread runs " + std::to_string(l.trip_count) +
                                         " trips of the nd_loop, more than " +
                                         std::to_string(kMaxTripCount));
  }
  loop_names_.clear();
  if (const json* li = jr::member(j, "local_index")) {
    l.index = jr::identifier(*li, path + ".local_index");
    loop_names_.push_back({l.index, l.trip_count, false});
  }
  if (const json* ix = jr::member(j, "index")) {
    const std::string ip = path + ".index";
    jr::array(*ix, ip, kMaxNdRank);
    if (ix->size() != nd.grid.size()) {
      throw InputError(ip, "names " + std::to_string(ix->size()) + " coordinates of a grid of " +
                               std::to_string(nd.grid.size()) + " dims (loop_info.index)");
    }
    for (std::size_t k = 0; k < ix->size(); ++k) {
      const std::string name =
          (*ix)[k].is_null() ? std::string() : jr::identifier((*ix)[k], jr::index_path(ip, k));
      for (const LoopName& n : loop_names_) {
        if (!name.empty() && n.name == name)
          throw InputError(jr::index_path(ip, k), "\"" + name + "\" names two loop indices");
      }
      nd.index_names.push_back(name);
      if (!name.empty()) loop_names_.push_back({name, nd.grid[k], true});
    }
  }
  l.nd = std::move(nd);
  parse_loop_body(j, path, depth, l);
  attach_nd_coords(l);
  return l;
}

}  // namespace collfuzz::case_json
