// Pallas axis names on CUDA x/y/z, cluster ranks, cluster_idx and the multicast mask, against the
// worked examples of the spec (section 1.1 and 3.6).
#include <gtest/gtest.h>

#include "harness/lowering/cluster_geometry.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz::lowering {
namespace {

Case mesh_case(const std::string& mesh) {
  return simtest::make_case(mesh, simtest::kLane, "[]", "[]");
}

TEST(ClusterGeometry, LastPallasNameIsCudaX) {
  const Case c = mesh_case(R"({"cluster": [2, 1], "cluster_names": ["x", "y"]})");
  const ClusterGeometry g(c);
  EXPECT_EQ(g.cuda(), (std::array<std::int64_t, 3>{1, 2, 1}));
  EXPECT_EQ(g.resolve_cluster_axis(AxisName::plain("x")), 1);  // Dimension.y, size 2
  EXPECT_EQ(g.resolve_cluster_axis(AxisName::plain("y")), 0);  // Dimension.x, size 1
  EXPECT_EQ(g.cluster_axes_repr(), "['y', 'x']");
  EXPECT_FALSE(g.resolve_cluster_axis(AxisName::plain("z")).has_value());
}

TEST(ClusterGeometry, ThreeAxesReverse) {
  const Case c = mesh_case(R"({"cluster": [2, 2, 1], "cluster_names": ["x", "y", "z"]})");
  const ClusterGeometry g(c);
  EXPECT_EQ(g.cuda(), (std::array<std::int64_t, 3>{1, 2, 2}));
  const int x = *g.resolve_cluster_axis(AxisName::plain("x"));
  const int z = *g.resolve_cluster_axis(AxisName::plain("z"));
  const int y = *g.resolve_cluster_axis(AxisName::plain("y"));
  EXPECT_EQ(x, 2);
  EXPECT_EQ(y, 1);
  EXPECT_EQ(z, 0);
  // collective_axes=("x", "z"): x is CUDA z (size 2), z is CUDA x (size 1), so n = 2.
  const std::vector<int> xz{x, z};
  EXPECT_EQ(g.collective_size(xz), 2);
  EXPECT_EQ(g.collective_size(std::vector<int>{y}), 2);
}

TEST(ClusterGeometry, RankIsRowMajorOverPallasAxes) {
  const Case c = mesh_case(R"({"cluster": [2, 3], "cluster_names": ["a", "b"]})");
  const ClusterGeometry g(c);
  EXPECT_EQ(g.num_ctas(), 6);
  for (std::int64_t r = 0; r < 6; ++r) {
    EXPECT_EQ(g.pallas_coords(r), (std::vector<std::int64_t>{r / 3, r % 3}));
    EXPECT_EQ(g.axis_index(r, 0, "a"), r / 3);
    EXPECT_EQ(g.axis_index(r, 0, "b"), r % 3);
  }
}

TEST(ClusterGeometry, MulticastMaskCluster2x2) {
  // Cluster (2, 2), names ("a", "b"): collective "a" (CUDA y) -> 0b0101 << b.
  const Case c = mesh_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})");
  const ClusterGeometry g(c);
  const std::vector<int> a{*g.resolve_cluster_axis(AxisName::plain("a"))};
  const std::vector<int> ab{*g.resolve_cluster_axis(AxisName::plain("a")),
                            *g.resolve_cluster_axis(AxisName::plain("b"))};
  for (std::int64_t r = 0; r < 4; ++r) {
    const std::int64_t av = r / 2;
    const std::int64_t bv = r % 2;
    EXPECT_EQ(g.collective_mask(r, a, false), 0b0101u << bv) << r;
    EXPECT_EQ(g.cluster_idx(r, a), av);
    EXPECT_EQ(g.collective_mask(r, ab, false), 0b1111u);
    EXPECT_EQ(g.cluster_idx(r, ab), 2 * av + bv);  // row-major over the collective Pallas axes
  }
}

TEST(ClusterGeometry, OrderOfCollectiveAxesDoesNotMatter) {
  const Case c = mesh_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})");
  const ClusterGeometry g(c);
  const std::vector<int> ab{1, 0};
  const std::vector<int> ba{0, 1};
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(g.cluster_idx(r, ab), g.cluster_idx(r, ba));
    EXPECT_EQ(g.collective_mask(r, ab, false), g.collective_mask(r, ba, false));
  }
}

TEST(ClusterGeometry, LeaderTrackedMaskIsTheLeaderOnly) {
  const Case c = mesh_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})");
  const ClusterGeometry g(c);
  const std::vector<int> b{0};
  for (std::int64_t r = 0; r < 4; ++r) {
    const std::int64_t av = r / 2;
    EXPECT_EQ(g.collective_mask(r, b, true), 1u << (2 * av));  // coordinate 0 along b, same a
  }
}

TEST(ClusterGeometry, FourCtaClusterAlongOneAxis) {
  const Case c = mesh_case(R"({"cluster": [4], "cluster_names": ["x"]})");
  const ClusterGeometry g(c);
  const std::vector<int> x{0};
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(g.collective_mask(r, x, false), 0b1111u);
    EXPECT_EQ(g.cluster_idx(r, x), r);
  }
}

}  // namespace
}  // namespace collfuzz::lowering
