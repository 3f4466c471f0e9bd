#include "generators/mesh_gen.h"

#include <algorithm>
#include <array>
#include <string>

#include "generators/weighted.h"
#include "harness/core/limits.h"

namespace collfuzz::generators {
namespace {

constexpr std::array<std::array<const char*, 4>, 3> kNameSchemes = {{
    {"x", "y", "z", "w"},
    {"c0", "c1", "c2", "c3"},
    {"a", "b", "c", "d"},
}};

AxisNames cluster_names(const MeshChoice& d) {
  const auto& scheme = kNameSchemes[d.scheme];
  AxisNames names;
  for (std::size_t i = 0; i < d.cluster.size(); ++i) names.push_back(AxisName::plain(scheme[i]));
  switch (d.names) {
    case NameVariant::kPlain:
      break;
    case NameVariant::kReversed:
      names.assign(names.rbegin(), names.rend());
      break;
    case NameVariant::kDuplicate:
      if (names.size() >= 2) names[1] = names[0];
      break;
    case NameVariant::kComposite:
      if (!names.empty()) names[0] = AxisName::tuple({scheme[0], scheme[1]});
      break;
    case NameVariant::kMissing:
      if (!names.empty()) names.pop_back();
      break;
    case NameVariant::kExtra:
      names.push_back(AxisName::plain("extra"));
      break;
  }
  return names;
}

}  // namespace

Mesh build_mesh(MeshChoice d, bool clean) {
  if (clean) {
    // A mesh JAX accepts: no name mistakes, at most 8 threads, at most 16 CTAs in 3 dims.
    if (d.names != NameVariant::kReversed) d.names = NameVariant::kPlain;
    if (d.threads != ThreadVariant::kBoth) d.threads = ThreadVariant::kNone;
    if (d.num_threads > 8) d.num_threads = 2;
    // A thread axis named like the first cluster axis stays: the compiler accepts the mesh
    // (interpret mode does not), and a PARTITIONED copy over that name reaches
    // launch_context.partitioned.size_divides only from an otherwise clean case.
    if (d.grid != GridVariant::kOne && d.grid != GridVariant::kTwo) d.grid = GridVariant::kNone;
    if (d.cluster.size() > 3) d.cluster.resize(3);
    std::int64_t product = 1;
    for (auto& c : d.cluster) {
      if (product * c > 16) c = 1;
      product *= c;
    }
  }
  Mesh m;
  m.cluster = d.cluster;
  m.cluster_names = cluster_names(d);
  std::string tname = d.thread_name == 0 ? "wg" : "t";
  if (d.thread_name == 2 && !m.cluster_names.empty() && !m.cluster_names[0].is_tuple) {
    tname = m.cluster_names[0].as_plain();
  }
  if (d.threads == ThreadVariant::kBoth || d.threads == ThreadVariant::kNumOnly)
    m.num_threads = d.num_threads;
  if (d.threads == ThreadVariant::kBoth || d.threads == ThreadVariant::kNameOnly)
    m.thread_name = tname;
  switch (d.grid) {
    case GridVariant::kNone:
      break;
    case GridVariant::kOne:
      m.grid = {2};
      m.grid_names = {AxisName::plain("g")};
      break;
    case GridVariant::kTwo:
      m.grid = {2, 3};
      m.grid_names = {AxisName::plain("gx"), AxisName::plain("gy")};
      break;
    case GridVariant::kHuge:
      m.grid = {70000, 1};
      m.grid_names = {AxisName::plain("gy"), AxisName::plain("gx")};
      break;
    case GridVariant::kUnnamed:
      m.grid = {2};
      break;
    case GridVariant::kClusterName:
      m.grid = {2};
      m.grid_names = {m.cluster_names.empty() ? AxisName::plain("g") : m.cluster_names[0]};
      break;
    case GridVariant::kFourD:
      m.grid = {2, 1, 1, 2};
      m.grid_names = {AxisName::plain("g0"), AxisName::plain("g1"), AxisName::plain("g2"),
                      AxisName::plain("g3")};
      break;
  }
  return m;
}

rc::Gen<Shape> cluster_dims() {
  const auto dim = weighted_element<std::int64_t>(
      {{16, 1}, {52, 2}, {5, 3}, {15, 4}, {6, 8}, {3, 16}, {1, 17}, {1, 32}, {1, 64}});
  const auto dims = several<std::int64_t>({{10, 0}, {45, 1}, {30, 2}, {12, 3}, {3, 4}}, dim);
  return rc::gen::map(dims, [](Shape s) {
    std::int64_t product = 1;
    for (auto& d : s) {
      if (product * d > limits::kMaxClusterSize) d = 1;
      product *= d;
    }
    return s;
  });
}

rc::Gen<MeshChoice> mesh_choice() {
  return rc::gen::build<MeshChoice>(
      rc::gen::set(&MeshChoice::cluster, cluster_dims()),
      rc::gen::set(&MeshChoice::scheme, weighted_element<std::size_t>({{70, 0}, {20, 1}, {10, 2}})),
      rc::gen::set(&MeshChoice::names, weighted_element<NameVariant>({{85, NameVariant::kPlain},
                                                                      {4, NameVariant::kReversed},
                                                                      {3, NameVariant::kDuplicate},
                                                                      {4, NameVariant::kComposite},
                                                                      {2, NameVariant::kMissing},
                                                                      {2, NameVariant::kExtra}})),
      rc::gen::set(&MeshChoice::threads,
                   weighted_element<ThreadVariant>({{57, ThreadVariant::kNone},
                                                    {39, ThreadVariant::kBoth},
                                                    {2, ThreadVariant::kNumOnly},
                                                    {2, ThreadVariant::kNameOnly}})),
      rc::gen::set(&MeshChoice::num_threads,
                   weighted_element<std::int64_t>(
                       {{12, 1}, {45, 2}, {5, 3}, {15, 4}, {6, 8}, {4, 9}, {4, 16}, {5, 17}})),
      rc::gen::set(&MeshChoice::thread_name,
                   weighted_element<std::size_t>({{79, 0}, {12, 1}, {9, 2}})),
      rc::gen::set(&MeshChoice::grid, weighted_element<GridVariant>({{65, GridVariant::kNone},
                                                                     {20, GridVariant::kOne},
                                                                     {6, GridVariant::kTwo},
                                                                     {2, GridVariant::kHuge},
                                                                     {2, GridVariant::kUnnamed},
                                                                     {3, GridVariant::kClusterName},
                                                                     {2, GridVariant::kFourD}})));
}

rc::Gen<Mesh> mesh() {
  return rc::gen::map(mesh_choice(), [](const MeshChoice& c) { return build_mesh(c, false); });
}

}  // namespace collfuzz::generators
