// The JAX releases collfuzz models: parsing target.jax, the since/until of rules.def, and the
// per-release behaviour of the reference (issue 12: 0.11.2 and 0.12.0.1 side by side).
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/jax_version.h"
#include "oracles/reference/reference.h"
#include "oracles/reference/rules.h"

namespace collfuzz {
namespace {

TEST(JaxVersion, ParsesOnlyModelledReleasesInOrder) {
  EXPECT_EQ(parse_jax_version("0.11.2"), JaxVersion::k0_11_2);
  EXPECT_EQ(parse_jax_version("0.12.0.1"), JaxVersion::k0_12_0_1);
  EXPECT_FALSE(parse_jax_version("0.12.0"));
  EXPECT_FALSE(parse_jax_version(""));
  EXPECT_LT(JaxVersion::k0_11_2, JaxVersion::k0_12_0_1);
  EXPECT_EQ(std::string(to_string(kDefaultJaxVersion)), "0.11.2");
  EXPECT_THROW(require_jax_version("1.0", "--jax"), InputError);
}

TEST(JaxVersion, RangesAreHalfOpen) {
  EXPECT_TRUE(jax_version_in_range(JaxVersion::k0_11_2, "", ""));
  EXPECT_TRUE(jax_version_in_range(JaxVersion::k0_11_2, "", "0.12.0.1"));
  EXPECT_FALSE(jax_version_in_range(JaxVersion::k0_12_0_1, "", "0.12.0.1"));
  EXPECT_FALSE(jax_version_in_range(JaxVersion::k0_11_2, "0.12.0.1", ""));
  EXPECT_TRUE(jax_version_in_range(JaxVersion::k0_12_0_1, "0.12.0.1", ""));
  EXPECT_THROW(jax_version_in_range(JaxVersion::k0_11_2, "0.10", ""), std::logic_error);
}

// Every bound in rules.def names a modelled release, and every rule holds in some release.
TEST(JaxVersion, EveryRuleBoundIsAModelledRelease) {
  for (const Rule& r : all_rules()) {
    bool holds_somewhere = false;
    for (JaxVersion v : known_jax_versions()) {
      EXPECT_NO_THROW(holds_somewhere = rule_holds(r, v) || holds_somewhere) << r.name;
    }
    EXPECT_TRUE(holds_somewhere) << r.name;
  }
  // The rows issue 12 changed.
  EXPECT_FALSE(rule_holds(*find_rule("copy.leader_tracked.cluster_size_2"), JaxVersion::k0_12_0_1));
  EXPECT_TRUE(
      rule_holds(*find_rule("copy.leader_tracked.last_axis_size_2"), JaxVersion::k0_12_0_1));
  EXPECT_FALSE(rule_holds(*find_rule("copy.leader_tracked.last_axis_size_2"), JaxVersion::k0_11_2));
}

Case leader_case(const char* jax) {
  std::string j =
      R"({"format": 1, "name": "t", "mesh": {"cluster": [2, 1], "cluster_names": ["x", "y"]},
    "target": {"arch": "sm_100a", "semantics": "lane")";
  if (jax) j += std::string(R"(, "jax": ")") + jax + "\"";
  j += R"(}, "inputs": [{"name": "src", "shape": [128, 64], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
      {"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
      {"name": "bar", "kind": "barrier"}],
     "body": [{"op": "copy_gmem_to_smem", "src": {"input": "src"}, "dst": {"alloc": "dst"},
               "barrier": {"alloc": "bar"}, "collective_axes": "x", "leader_tracked": {"partitioned": 0}}]}]})";
  return case_from_json(nlohmann::json::parse(j));
}

TEST(JaxVersion, TargetJaxPinsTheCaseAndRoundTrips) {
  const Case unpinned = leader_case(nullptr);
  EXPECT_FALSE(unpinned.target.jax_pinned);
  EXPECT_EQ(unpinned.target.jax, kDefaultJaxVersion);
  EXPECT_EQ(case_to_json(unpinned)["target"].count("jax"), 0u);
  const Case pinned = leader_case("0.12.0.1");
  EXPECT_TRUE(pinned.target.jax_pinned);
  EXPECT_EQ(pinned.target.jax, JaxVersion::k0_12_0_1);
  EXPECT_EQ(case_to_json(pinned)["target"]["jax"], "0.12.0.1");
  EXPECT_THROW(leader_case("0.13"), InputError);
}

// A 2x1 cluster partitioned over its first axis: 0.11.2 accepts it (2 CTAs), 0.12.0.1 wants the
// last axis.
TEST(JaxVersion, TheReferenceFollowsTheCasesRelease) {
  const Outcome o11 = predict(leader_case("0.11.2"), Profile::kMosaic).outcome;
  EXPECT_NE(o11.kind, OutcomeKind::kRejected);
  const Outcome o12 = predict(leader_case("0.12.0.1"), Profile::kMosaic).outcome;
  ASSERT_EQ(o12.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o12.diagnostic->rule, "copy.leader_tracked.last_axis_size_2");
  EXPECT_EQ(o12.diagnostic->message,
            "Partitioned loads only supported along the last cluster dimension x if it has size 2. "
            "Got collective_axes=('x',) and cluster size (1, 2, 1).");
}

}  // namespace
}  // namespace collfuzz
