// The warp-level context (docs/case-format.md, "warp_map"): parsing, the modelled subset's parse
// errors, the round trip, and the expansion the reference and the lowering see.
#include <gtest/gtest.h>

#include "harness/core/errors.h"
#include "harness/core/warp_map.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::minimal_case_json;

// The minimal case with its copy inside `warp_map` (under `when warp == 0` if `one_warp`).
json with_warp_copy(bool one_warp) {
  json j = minimal_case_json();
  json& body = j["program"][0]["body"];
  json copy = body[0];
  json inner = one_warp ? json::array({{{"op", "when"},
                                        {"cond", {{"axis", "warp"}, {"eq", 0}}},
                                        {"body", json::array({copy})}}})
                        : json::array({copy});
  body[0] = {{"op", "warp_map"}, {"axis", "warp"}, {"body", inner}};
  return j;
}

std::size_t copies_in(const Body& body) {
  std::size_t n = 0;
  for (const Op& op : body) {
    n += std::holds_alternative<CopyGmemToSmem>(op.v);
    if (const auto* w = std::get_if<When>(&op.v);
        w && w->cond.kind == Cond::Kind::kConst && !w->cond.constant)
      continue;
    if (const Body* inner = nested_body(op)) n += copies_in(*inner);
  }
  return n;
}

TEST(WarpMap, ParsesAndRoundTrips) {
  const json j = with_warp_copy(true);
  const Case c = case_from_json(j);
  const auto& wm = std::get<WarpMap>(std::get<RunScoped>(c.program[0].v).body[0].v);
  EXPECT_EQ(wm.axis, "warp");
  EXPECT_EQ(case_to_json(c)["program"], j["program"]);
  EXPECT_TRUE(has_warp_map(c.program));
}

TEST(WarpMap, ExpandsToOneCopyOfTheBodyPerWarp) {
  // Under when(warp == 0) one copy runs; without it, four (one per warp).
  for (const bool one : {true, false}) {
    const Case x = expand_warp_maps(case_from_json(with_warp_copy(one)));
    EXPECT_FALSE(has_warp_map(x.program));
    const Op& marker = std::get<RunScoped>(x.program[0].v).body[0];
    EXPECT_TRUE(marker.from_warp_map);
    EXPECT_TRUE(marker.warp_axis.empty());
    EXPECT_EQ(marker.path, "$.program[0].body[0]");
    EXPECT_EQ(copies_in(x.program), one ? 1u : 4u);
  }
}

TEST(WarpMap, ABoundWarpIndexStaysTraced) {
  // pl.when(lax.axis_index("warp") == 0) traces its body for every warp: the bound value is
  // known per warp copy, yet the condition is no Python bool.
  const Case x = expand_warp_maps(case_from_json(with_warp_copy(true)));
  const Body& all = std::get<When>(std::get<RunScoped>(x.program[0].v).body[0].v).body;
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t w = 0; w < 4; ++w) {
    const Cond& cond = std::get<When>(all[w].v).cond;
    EXPECT_EQ(cond.kind, Cond::Kind::kConst);
    EXPECT_EQ(cond.constant, w == 0);
    EXPECT_TRUE(cond.traced);
  }
}

TEST(WarpMap, ANestedWarpMapKeepsOneCopyOfItsBody) {
  // JAX traces a nested warp_map's body before it rejects the nesting: warp 0's copy is kept.
  json j = with_warp_copy(false);
  json& outer = j["program"][0]["body"][0];
  outer["body"] = json::array({{{"op", "warp_map"}, {"axis", "inner"}, {"body", outer["body"]}}});
  const Case x = expand_warp_maps(case_from_json(j));
  const Body& all = std::get<When>(std::get<RunScoped>(x.program[0].v).body[0].v).body;
  ASSERT_EQ(all.size(), 4u);  // one nested marker per outer warp
  for (const Op& marker : all) {
    EXPECT_TRUE(marker.from_warp_map);
    EXPECT_EQ(marker.warp_axis, "warp");
    const Body& inner = std::get<When>(marker.v).body;
    ASSERT_EQ(inner.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<CopyGmemToSmem>(inner[0].v));
    EXPECT_EQ(inner[0].warp_axis, "inner");
  }
}

TEST(WarpMap, TheWarpAxisIndexesAndIsBoundPerWarp) {
  json j = with_warp_copy(false);
  j["inputs"][0]["shape"] = {512, 64};
  j["program"][0]["body"][0]["body"][0]["src"]["index"] = {
      {{"start", {{"axis", "warp"}, {"mul", 128}}}, {"size", 128}}};
  const Case x = expand_warp_maps(case_from_json(j));
  const Body& all = std::get<When>(std::get<RunScoped>(x.program[0].v).body[0].v).body;
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t w = 0; w < 4; ++w) {
    const auto& cp = std::get<CopyGmemToSmem>(all[w].v);
    EXPECT_FALSE(cp.src_index[0].dyn_start);
    EXPECT_EQ(cp.src_index[0].start, static_cast<std::int64_t>(w) * 128);
    EXPECT_EQ(all[w].warp_axis, "warp");
  }
  // Out of bounds for warp 3 (start 384 + 128 > 400): refused.
  j["inputs"][0]["shape"] = {400, 64};
  EXPECT_NE(error_of(j).find("out-of-bounds starts on the warp axis"), std::string::npos)
      << error_of(j);
}

TEST(WarpMap, TheModelledSubsetIsEnforcedWithThePath) {
  // Both lowering semantics (Warpgroup lowers it to the dialect's warp_map op, 2026-12-07).
  json j = with_warp_copy(true);
  j["target"]["semantics"] = "warpgroup";
  EXPECT_EQ(copies_in(expand_warp_maps(case_from_json(j)).program), 1u);

  j = with_warp_copy(true);
  j["program"][0]["body"][0]["body"].push_back(
      {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}});
  EXPECT_NE(error_of(j).find("$.program[0].body[0].body[1].op: a barrier_wait inside warp_map"),
            std::string::npos)
      << error_of(j);

  j = with_warp_copy(true);
  j["program"][0]["body"][0]["body"].push_back(
      {{"op", "run_scoped"},
       {"allocs", {{{"name", "s"}, {"kind", "smem"}, {"shape", {8}}, {"dtype", "float32"}}}},
       {"body", json::array()}});
  EXPECT_NE(error_of(j).find("run_scoped inside warp_map with allocations"), std::string::npos)
      << error_of(j);

  // The warp axis exists inside the warp_map only.
  j = minimal_case_json();
  j["program"][0]["body"][0] = {{"op", "when"},
                                {"cond", {{"axis", "warp"}, {"eq", 0}}},
                                {"body", json::array({j["program"][0]["body"][0]})}};
  EXPECT_NE(error_of(j).find("\"warp\" is not a cluster axis"), std::string::npos) << error_of(j);
}

}  // namespace
}  // namespace collfuzz
