// plgpu.nd_loop (docs/case-format.md, "nd_loop"): the grid's steps dealt out over the collective
// axes, step = t * axis_size + axis_index unravelled into loop_info.index (over
// (*grid / tiling, *tiling) with a tiling), each thread running
// grid_size // axis_size + (axis_index < grid_size % axis_size) trips. JAX's tiling checks
// (trace.nd_loop.*), a carry under Lane compared whatever the trips (the count is dynamic).
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/loop_index.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::expect_parse_refused;
using simtest::parse_error;
using simtest::predicted_and_simulated;

json slice(const char* name, std::int64_t mul, std::int64_t size) {
  return {{"start", {{"loop", name}, {"mul", mul}}}, {"size", size}};
}

// A 2-CTA cluster (axis "x"); x = arange float32[8 * rows, 32 * cols]; an nd_loop over `grid`
// copies tile (m, n) (8x32) of x into SMEM and stores it to the same tile of y.
json tiles_case(const json& grid, const json& tiling = nullptr, std::int64_t rows = 2,
                std::int64_t cols = 3) {
  json j = json::parse(R"({
    "format": 1, "name": "nd_loop",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a"},
    "inputs": [{"name": "a", "dtype": "float32", "fill": {"pattern": "arange", "step": 1}}],
    "outputs": [{"name": "y", "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "tile", "kind": "smem", "shape": [8, 32], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}],
      "body": [{"op": "nd_loop", "collective_axes": "x", "index": ["m", "n"], "local_index": "t",
                "body": [{"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]}]
  })");
  j["inputs"][0]["shape"] = {8 * rows, 32 * cols};
  j["outputs"][0]["shape"] = {8 * rows, 32 * cols};
  json& l = j["program"][0]["body"][0];
  l["grid"] = grid;
  if (!tiling.is_null()) l["tiling"] = tiling;
  const json index = json::array({slice("m", 8, 8), slice("n", 32, 32)});
  json& body = l["body"];
  body.insert(body.begin(), json{{"op", "copy_gmem_to_smem"},
                                 {"src", {{"input", "a"}, {"index", index}}},
                                 {"dst", {{"alloc", "tile"}}},
                                 {"barrier", {{"alloc", "bar"}}}});
  body.insert(body.begin() + 2, json{{"op", "copy_smem_to_gmem"},
                                     {"src", {{"alloc", "tile"}}},
                                     {"dst", {{"output", "y"}, {"index", index}}}});
  return j;
}

float y_at(const Outcome& o, std::int64_t e) {
  float f = 0;
  std::memcpy(&f, o.outputs.at(0).bytes.data() + e * 4, 4);
  return f;
}

TEST(NdLoop, EachCtaRunsItsOwnStepsAndTogetherTheyCoverTheGrid) {
  // grid (2, 3) over 2 CTAs: CTA 0 steps 0, 2, 4 = (0,0), (0,2), (1,1); CTA 1 steps 1, 3, 5 =
  // (0,1), (1,0), (1,2). Every tile of y is x's.
  const Outcome o = predicted_and_simulated(case_from_json(tiles_case({2, 3})));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t e = 0; e < 16 * 96; e += 7) EXPECT_EQ(y_at(o, e), static_cast<float>(e));
  for (std::int64_t rank : {0, 1}) {
    const BarrierRecord* b = simtest::barrier(simtest::cta(o, rank), "bar", 0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->phases, 3);
    EXPECT_EQ(b->received, 3 * 1024);
  }
  // The last tile each CTA copied: (1,1) starts at x[8][32] = 800, (1,2) at x[8][64] = 832.
  EXPECT_EQ(simtest::buffer(simtest::cta(o, 0), "tile")->bytes.size(), 1024u);
}

TEST(NdLoop, AnUnevenGridLeavesTheLaterCtasATripShort) {
  // grid (3,) over 2 CTAs: 3 // 2 + (a < 1): CTA 0 runs 2 trips, CTA 1 one.
  json j = tiles_case({1, 3});
  const Outcome o = predicted_and_simulated(case_from_json(j));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(simtest::barrier(simtest::cta(o, 0), "bar", 0)->phases, 2);
  EXPECT_EQ(simtest::barrier(simtest::cta(o, 1), "bar", 0)->phases, 1);
  // A cluster barrier in the body: CTA 0's second trip waits for CTA 1, which has left the loop.
  j["program"][0]["allocs"].push_back(
      {{"name", "cbar"}, {"kind", "cluster_barrier"}, {"collective_axes", {"x"}}});
  json& body = j["program"][0]["body"][0]["body"];
  body.push_back({{"op", "barrier_arrive"}, {"barrier", {{"alloc", "cbar"}}}});
  body.push_back({{"op", "barrier_wait"}, {"barrier", {{"alloc", "cbar"}}}});
  const Outcome hang = predicted_and_simulated(case_from_json(j));
  EXPECT_EQ(hang.kind, OutcomeKind::kDeadlock);
  const CtaRecord& first = simtest::cta(hang, 0);
  EXPECT_FALSE(first.waits.back().completed);
  EXPECT_EQ(first.waits.back().barrier, "cbar[0]");
}

TEST(NdLoop, ATilingUnravelsTheStepOverTilesThenTheTileAndTheOrderFollows) {
  // grid (2, 4), tiling (1, 2): the step unravels over (2, 2, 1, 2); step s is
  // (s // 4, (s // 2 % 2) * 2 + s % 2): CTA 0 (even steps) gets (0,0), (0,2), (1,0), (1,2).
  const Case k = case_from_json(tiles_case({2, 4}, {1, 2}, 2, 4));
  const Loop& l = std::get<Loop>(std::get<RunScoped>(k.program[0].v).body[0].v);
  const auto cta0 = [](const std::string&) { return std::int64_t{0}; };
  const auto cta1 = [](const std::string&) { return std::int64_t{1}; };
  const auto n = nd_coord(*l.nd, 1);
  const auto m = nd_coord(*l.nd, 0);
  const std::int64_t n0[4] = {0, 2, 0, 2};
  const std::int64_t n1[4] = {1, 3, 1, 3};
  for (std::int64_t t = 0; t < 4; ++t) {
    EXPECT_EQ(nd_value(*m, cta0, t), t / 2) << t;
    EXPECT_EQ(nd_value(*n, cta0, t), n0[t]) << t;
    EXPECT_EQ(nd_value(*n, cta1, t), n1[t]) << t;
  }
  const Outcome o = predicted_and_simulated(k);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t e = 0; e < 16 * 128; e += 5) EXPECT_EQ(y_at(o, e), static_cast<float>(e));
}

TEST(NdLoop, JaxChecksTheTilingWhenTheLoopIsCalled) {
  const Outcome length = predicted_and_simulated(case_from_json(tiles_case({2, 3}, {2})));
  ASSERT_TRUE(length.diagnostic);
  EXPECT_EQ(length.diagnostic->rule, "trace.nd_loop.tiling_length");
  EXPECT_EQ(length.diagnostic->message, "tiling=(2,) and grid=(2, 3) must have same length.");
  const Outcome divides = predicted_and_simulated(case_from_json(tiles_case({2, 3}, {1, 2})));
  ASSERT_TRUE(divides.diagnostic);
  EXPECT_EQ(divides.diagnostic->rule, "trace.nd_loop.tiling_divides");
  EXPECT_EQ(divides.diagnostic->message, "Tiling (1, 2) does not divide grid (2, 3).");
  EXPECT_EQ(divides.diagnostic->stage, "trace");
}

TEST(NdLoop, TheReaderNamesTheFieldOfABadLoop) {
  json bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["collective_axes"] = "nope";
  expect_parse_refused(bad, "$.program[0].body[0].collective_axes", "not a cluster axis");
  bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["index"] = {"m"};
  expect_parse_refused(bad, "$.program[0].body[0].index", "names 1 coordinates of a grid of 2");
  bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["grid"] = {0, 3};
  expect_parse_refused(bad, "$.program[0].body[0].grid[0]", "");
  bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["grid"] = {512, 3};
  expect_parse_refused(bad, "$.program[0].body[0].grid", "trips of the nd_loop");
  bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["grid"] = {65536, 65536, 65536, 65536};  // 2^64 steps
  expect_parse_refused(bad, "$.program[0].body[0].grid", "more than 65536 steps");
  bad = tiles_case({2, 3});
  bad["program"][0]["body"][0]["trip_count"] = 3;
  expect_parse_refused(bad, "$.program[0].body[0].trip_count", "unknown field");
  // A slot reads the local index, not a coordinate of the grid index.
  bad = tiles_case({2, 3});
  bad["program"][0]["allocs"][1]["num_barriers"] = 2;
  bad["program"][0]["body"][0]["body"][1]["barrier"]["index"] = {{"loop", "m"}, {"mod", 2}};
  expect_parse_refused(bad, "$.program[0].body[0].body[1].barrier.index.loop",
                       "coordinate of the nd_loop's grid index");
  // The local index as a slot parses.
  bad["program"][0]["body"][0]["body"][1]["barrier"]["index"] = {{"loop", "t"}, {"mod", 2}};
  EXPECT_EQ(parse_error(bad), "parsed");
}

TEST(NdLoop, TheWriterWritesWhatTheReaderReads) {
  const json j = tiles_case({2, 4}, {1, 2}, 2, 4);
  const Case k = case_from_json(j);
  const json written = case_to_json(k);
  const json& l = written["program"][0]["body"][0];
  EXPECT_EQ(l["op"], "nd_loop");
  EXPECT_EQ(l["grid"], json({2, 4}));
  EXPECT_EQ(l["tiling"], json({1, 2}));
  EXPECT_EQ(l["collective_axes"], "x");
  EXPECT_EQ(l["index"], json({"m", "n"}));
  EXPECT_EQ(l["local_index"], "t");
  EXPECT_FALSE(l.contains("trip_count"));
  EXPECT_EQ(case_to_json(case_from_json(written)), written);
}

TEST(NdLoop, AnEmptyTilingIsNoTiling) {
  // helpers.py tests `if tiling:`: tiling=() is tiling=None, the same loop.
  const Case untiled = case_from_json(tiles_case({2, 4}, nullptr, 2, 4));
  const Case empty = case_from_json(tiles_case({2, 4}, json::array(), 2, 4));
  EXPECT_EQ(case_to_json(empty), case_to_json(untiled));
}

TEST(NdLoop, UnderLaneACarryIsComparedEvenWhereEveryCtaRunsOneTrip) {
  // grid (2,) over 2 CTAs: one trip each, but the trip count is dynamic: no unrolling.
  json j = tiles_case({1, 2});
  json& l = j["program"][0]["body"][0];
  l["carry"] = {{"name", "acc"},
                {"dtype", "float32"},
                {"shape", {8, 32}},
                {"init", {{"const", 0}}},
                {"next", {{"add", {{{"carry", "acc"}}, {{"load", {{"alloc", "tile"}}}}}}}}};
  j["target"]["semantics"] = "lane";
  const Outcome lane = predicted_and_simulated(case_from_json(j));
  ASSERT_TRUE(lane.diagnostic);
  EXPECT_EQ(lane.diagnostic->rule, "lower.loop.carry_layout");
  j["target"]["semantics"] = "warpgroup";
  EXPECT_EQ(predicted_and_simulated(case_from_json(j)).kind, OutcomeKind::kCompleted);
}

}  // namespace
}  // namespace collfuzz
