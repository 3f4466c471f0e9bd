// The loop index (docs/case-format.md, "loop"): dynamic entries {"loop": "i", ...} read trip i of
// the enclosing loop. The reference predicts each trip's tile and the simulator, running the
// lowering's plan, agrees; the parser keeps the index inside its loop and the store in bounds.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/loop_index.h"
#include "harness/sim/simulator.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "tests/core/test_util.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::kWait;
using simtest::predicted_and_simulated;

// A cluster of two CTAs; x f32[48, 32] (arange), y f32[2, 48, 32]; `tile` f32[16, 32], `bar`,
// `cbar` (over x); a loop of `trips` trips named "i" holding `body`.
json indexed_case(std::int64_t trips, const json& body) {
  json j = json::parse(R"({
    "format": 1, "name": "loop_index",
    "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a", "semantics": "warpgroup"},
    "inputs": [{"name": "x", "shape": [48, 32], "dtype": "float32",
                "fill": {"pattern": "arange"}}],
    "outputs": [{"name": "y", "shape": [2, 48, 32], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "tile", "kind": "smem", "shape": [16, 32], "dtype": "float32"},
        {"name": "bar", "kind": "barrier", "num_arrivals": 1},
        {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"]}],
      "body": [{"op": "loop", "trip_count": 0, "index": "i", "body": []}]}]
  })");
  j["program"][0]["body"][0]["trip_count"] = trips;
  j["program"][0]["body"][0]["body"] = body;
  return j;
}

json load(const json& start) {
  return json{{"op", "copy_gmem_to_smem"},
              {"src", {{"input", "x"}, {"index", json::array({{{"start", start}, {"size", 16}}})}}},
              {"dst", {{"alloc", "tile"}}},
              {"barrier", {{"alloc", "bar"}, {"index", 0}}},
              {"collective_axes", "x"}};
}

json store(const json& rows) {
  return json{{"op", "copy_smem_to_gmem"},
              {"src", {{"alloc", "tile"}}},
              {"dst", {{"output", "y"}, {"index", json::array({{{"axis", "x"}}, rows})}}}};
}

const json kSync = json::parse(
    R"([{"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
        {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}}])");
const json kTileI = json::parse(R"({"loop": "i", "mul": 16})");

json tiles_body(const json& start, const json& rows) {
  json body = json::array({load(start), kWait, store(rows)});
  for (const auto& op : kSync) body.push_back(op);
  return body;
}

float element(const OutputRecord& out, std::size_t k) {
  float v = 0;
  std::memcpy(&v, out.bytes.data() + k * sizeof(float), sizeof(float));
  return v;
}

TEST(LoopIndex, EachTripCopiesAndStoresItsOwnTile) {
  const Case c = case_from_json(
      indexed_case(3, tiles_body(kTileI, {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}})));
  const Outcome o = predicted_and_simulated(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (const CtaRecord& cta : o.ctas) {
    EXPECT_EQ(cta.barriers[0].phases, 3);
    EXPECT_EQ(cta.barriers[0].armed, 3 * 16 * 32 * 4);
    EXPECT_EQ(cta.barriers[0].received, 3 * 16 * 32 * 4);
  }
  ASSERT_EQ(o.outputs.size(), 1u);
  const OutputRecord& y = o.outputs[0];
  ASSERT_EQ(y.written, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 2 * 48 * 32}}));
  // y[c] == x (arange) for both CTAs: every trip stored tile i at rows 16i..16i+15.
  for (std::size_t k = 0; k < 2 * 48 * 32; ++k)
    ASSERT_EQ(element(y, k), static_cast<float>(k % (48 * 32))) << "element " << k;
}

TEST(LoopIndex, AnIntegerIndexOnTheLoopPicksTheRow) {
  // Two trips of a per-row tile: x.at[pl.ds(i * 16 + 8, 16)] into y.at[x, pl.ds(i * 16, 16)].
  const Case c = case_from_json(
      indexed_case(2, tiles_body(json{{"loop", "i"}, {"mul", 16}, {"add", 8}},
                                 {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}})));
  const Outcome o = predicted_and_simulated(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  const OutputRecord& y = o.outputs.at(0);
  // Row r < 32 of y[0] holds x's row r + 8.
  for (std::size_t r = 0; r < 32; ++r)
    EXPECT_EQ(element(y, r * 32), static_cast<float>((r + 8) * 32)) << "row " << r;
}

TEST(LoopIndex, ParsesRoundTripsAndKeepsTheIndexInItsLoop) {
  const json good =
      indexed_case(3, tiles_body(kTileI, {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}}));
  const Case c = case_from_json(good);
  EXPECT_EQ(std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).index, "i");
  EXPECT_EQ(case_to_json(case_from_json(case_to_json(c))), case_to_json(c));
  const auto error = testing::error_of;
  const json rows = {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}};
  // Another name than the loop's.
  std::string e = error(indexed_case(3, tiles_body(json{{"loop", "j"}, {"mul", 16}}, rows)));
  EXPECT_NE(e.find("not the index of an enclosing loop"), std::string::npos) << e;
  EXPECT_NE(e.find("src.index[0].start.loop"), std::string::npos) << e;
  // The index outside its loop.
  json outside = good;
  outside["program"][0]["body"].push_back(load(kTileI));
  e = error(outside);
  EXPECT_NE(e.find("not the index of an enclosing loop"), std::string::npos) << e;
  // A loop without an index name.
  json unnamed = good;
  unnamed["program"][0]["body"][0].erase("index");
  EXPECT_NE(error(unnamed).find("not the index of an enclosing loop"), std::string::npos);
  // Both an axis and a loop.
  e = error(indexed_case(3, tiles_body(json{{"loop", "i"}, {"axis", "x"}}, rows)));
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
  // A store's slice past the output on the last trip: 4 trips of 16 rows in 48.
  e = error(indexed_case(4, tiles_body(json{{"loop", "i"}, {"mul", 8}}, rows)));
  EXPECT_NE(e.find("dst.index[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("[48, 64)"), std::string::npos) << e;
  // An integer index on the loop past its dim: y.at[x, i * 16] has dim 48 at index 1.
  e = error(indexed_case(3, tiles_body(kTileI, json{{"loop", "i"}, {"mul", 24}})));
  EXPECT_NE(e.find("loop index 2"), std::string::npos) << e;
}

TEST(LoopIndex, BindingTheIndexMakesTheEntriesStatic) {
  Case c = case_from_json(
      indexed_case(3, tiles_body(kTileI, {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}})));
  Body body = std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).body;
  EXPECT_TRUE(reads_loop_index(body, "i"));
  bind_loop_index(body, "i", 2);
  EXPECT_FALSE(reads_loop_index(body, "i"));
  const auto& cp = std::get<CopyGmemToSmem>(body[0].v);
  EXPECT_FALSE(cp.src_index[0].dyn_start);
  EXPECT_EQ(cp.src_index[0].start, 32);
  const auto& st = std::get<CopySmemToGmem>(body[2].v);
  EXPECT_EQ(st.dst_index[1].start, 32);
  ASSERT_TRUE(st.dst_index[0].dyn_start);  // the axis entry stays dynamic
  EXPECT_FALSE(st.dst_index[0].dyn_start->loop);
}

// Double buffering (docs/case-format.md, "Slots"): one CTA, x f32[64, 32] (arange), y f32[64, 32];
// trip i copies tile i into buf.at[i % 2] on bars.at[i % 2], waits there and stores the slot.
json double_buffered(const json& slot, std::int64_t trips = 4) {
  json j = json::parse(R"({
    "format": 1, "name": "double_buffered", "mesh": {},
    "target": {"arch": "sm_90a", "semantics": "warpgroup"},
    "inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32", "fill": {"pattern": "arange"}}],
    "outputs": [{"name": "y", "shape": [64, 32], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "buf", "kind": "smem", "shape": [2, 16, 32], "dtype": "float32"},
        {"name": "bars", "kind": "barrier", "num_barriers": 2}],
      "body": [{"op": "loop", "trip_count": 0, "index": "i", "body": []}]}]
  })");
  const json tile = {{"start", {{"loop", "i"}, {"mul", 16}}}, {"size", 16}};
  json& loop = j["program"][0]["body"][0];
  loop["trip_count"] = trips;
  loop["body"] =
      json::array({{{"op", "copy_gmem_to_smem"},
                    {"src", {{"input", "x"}, {"index", json::array({tile})}}},
                    {"dst", {{"alloc", "buf"}, {"index", json::array({slot})}}},
                    {"barrier", {{"alloc", "bars"}, {"index", slot}}}},
                   {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bars"}, {"index", slot}}}},
                   {{"op", "copy_smem_to_gmem"},
                    {"src", {{"alloc", "buf"}, {"index", json::array({slot})}}},
                    {"dst", {{"output", "y"}, {"index", json::array({tile})}}}}});
  return j;
}

TEST(LoopSlots, EachBarrierOfTheArrayServesEveryOtherTrip) {
  const Case c = case_from_json(double_buffered({{"loop", "i"}, {"mod", 2}}));
  const Outcome o = predicted_and_simulated(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  const CtaRecord& cta = o.ctas.at(0);
  ASSERT_EQ(cta.barriers.size(), 2u);
  for (const BarrierRecord& b : cta.barriers) {
    EXPECT_EQ(b.phases, 2) << b.index;
    EXPECT_EQ(b.armed, 2 * 16 * 32 * 4) << b.index;
  }
  ASSERT_EQ(cta.waits.size(), 4u);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(cta.waits[t].barrier, "bars[" + std::to_string(t % 2) + "]");
    EXPECT_EQ(cta.waits[t].phase, static_cast<std::int64_t>(t / 2));
    EXPECT_TRUE(cta.waits[t].completed);
  }
  const OutputRecord& y = o.outputs.at(0);
  for (std::size_t k = 0; k < 64 * 32; ++k) ASSERT_EQ(element(y, k), static_cast<float>(k)) << k;
  // The buffer ends with trip 2's tile in slot 0 and trip 3's in slot 1: rows 32..63 of x.
  const BufferRecord& buf = cta.buffers.at(0);
  float first = 0;
  std::memcpy(&first, buf.bytes.data(), sizeof(float));
  EXPECT_EQ(first, 32.0f * 32);
}

// A case built in memory (a generator's, a shrinker's candidate) may hold anything in the static
// index a slot stands in for; the reference and the lowering never read it. (A campaign found the
// lowering adding it to the store's SMEM offset: `memory:output:copy_smem_to_gmem:sim`.)
TEST(LoopSlots, TheIndexASlotStandsInForIsNeverRead) {
  Case c = case_from_json(double_buffered({{"loop", "i"}, {"mod", 2}}));
  Body& body = std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).body;
  std::get<CopyGmemToSmem>(body[0].v).dst_index.at(0) = 1;
  std::get<CopySmemToGmem>(body[2].v).src_index.at(0) = 1;
  const Outcome o = predicted_and_simulated(c);
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::size_t k = 0; k < 64 * 32; ++k)
    ASSERT_EQ(element(o.outputs.at(0), k), static_cast<float>(k)) << k;
}

TEST(LoopSlots, ASlotThatLeavesItsArrayOrItsLoopIsRefused) {
  const auto error = testing::error_of;
  // i % 3 reaches 2 on a 2-slot buffer.
  std::string e = error(double_buffered({{"loop", "i"}, {"mod", 3}}));
  EXPECT_NE(e.find("dst.index[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("the slot reaches 2"), std::string::npos) << e;
  // An axis index is not a slot.
  e = error(double_buffered({{"axis", "x"}, {"mod", 2}}));
  EXPECT_NE(e.find("reads a loop's index"), std::string::npos) << e;
  // (i + 1) % 2 is a slot too, and reads back as written.
  const json shifted = double_buffered({{"loop", "i"}, {"add", 1}, {"mod", 2}});
  const Case c = case_from_json(shifted);
  EXPECT_EQ(case_to_json(case_from_json(case_to_json(c))), case_to_json(c));
  const auto& cp = std::get<CopyGmemToSmem>(
      std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).body[0].v);
  ASSERT_TRUE(cp.dst_slot && cp.barrier && cp.barrier->slot);
  EXPECT_EQ(dyn_value(*cp.dst_slot, 0), 1);
  EXPECT_EQ(barrier_index_at(*cp.barrier, 1), 0);
  // Unwrapped at trip 0 (the shrinker): the slots become the static index 1.
  Body body = std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).body;
  EXPECT_TRUE(reads_loop_index(body, "i"));
  bind_loop_index(body, "i", 0);
  EXPECT_FALSE(reads_loop_index(body, "i"));
  const auto& bound = std::get<CopyGmemToSmem>(body[0].v);
  EXPECT_FALSE(bound.dst_slot);
  EXPECT_EQ(bound.dst_index.at(0), 1);
  EXPECT_EQ(bound.barrier->index, 1);
}

}  // namespace
}  // namespace collfuzz
