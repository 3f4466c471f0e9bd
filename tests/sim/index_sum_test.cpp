// Dynamic indices summed over several axes (docs/case-format.md, "Index entries": "plus"):
// `pl.ds(lax.axis_index("a") * 64 + lax.axis_index("b") * 32, 32)` and `i * 64 +
// lax.axis_index("x") * 32`. The parser keeps integer indices and store slices in bounds over
// every combination of the terms, the JSON form round-trips, a warp_map or a loop binding one term
// folds it into `add`, and the reference and the simulator agree on the rows each CTA reads.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/loop_index.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::predicted_and_simulated;
using simtest::y_at;

json sum_start(std::int64_t a_mul, std::int64_t b_mul) {
  return {{"axis", "a"}, {"mul", a_mul}, {"add", 0}, {"plus", {{{"axis", "b"}, {"mul", b_mul}}}}};
}

// Cluster (2, 2) named (a, b); x f32[64, 32] (arange) and y f32[64, 32]; each CTA copies the 16
// rows `start` gives into buf and stores them to the rows `store_start` gives.
json cluster_case(const json& start, const json& store_start) {
  json j = json::parse(R"({
    "format": 1, "name": "index_sum",
    "mesh": {"cluster": [2, 2], "cluster_names": ["a", "b"]},
    "target": {"arch": "sm_90a", "semantics": "lane"},
    "inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32", "fill": {"pattern": "arange"}}],
    "outputs": [{"name": "y", "shape": [64, 32], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "buf", "kind": "smem", "shape": [16, 32], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}],
      "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "buf"},
         "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
        {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"}, "dst": {"output": "y"}}]}]
  })");
  json& body = j["program"][0]["body"];
  body[0]["src"]["index"] = json::array({{{"start", start}, {"size", 16}}});
  body[2]["dst"]["index"] = json::array({{{"start", store_start}, {"size", 16}}});
  return j;
}

TEST(IndexSums, EachCtaOfTheClusterReadsItsOwnRows) {
  const Outcome o =
      predicted_and_simulated(case_from_json(cluster_case(sum_start(32, 16), sum_start(32, 16))));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  ASSERT_EQ(o.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 64 * 32}}));
  for (std::int64_t e : {0, 16 * 32, 32 * 32 + 5, 63 * 32 + 31})
    EXPECT_EQ(y_at(o, e), static_cast<float>(e));
}

TEST(IndexSums, TheTermsAreAddedNotOneOfThem) {
  // Reads by a * 32 + b * 16, stores by a * 16 + b * 32: CTA (0, 1) reads rows 16.. and stores
  // them at rows 32..; one term alone would store them at rows 0.. or not at all.
  const Outcome o =
      predicted_and_simulated(case_from_json(cluster_case(sum_start(32, 16), sum_start(16, 32))));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(y_at(o, 32 * 32), static_cast<float>(16 * 32));
  EXPECT_EQ(y_at(o, 16 * 32), static_cast<float>(32 * 32));
}

TEST(IndexSums, AStoreSliceStaysInBoundsOverEveryCombination) {
  // a * 32 + b * 32 reaches row 64 for CTA (1, 1): out of bounds of y's 64 rows.
  try {
    case_from_json(cluster_case(sum_start(32, 16), sum_start(32, 32)));
    ADD_FAILURE() << "an out-of-bounds store slice parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("reaches [64, 80)"), std::string::npos) << e.what();
  }
}

TEST(IndexSums, BadTermsNameTheirField) {
  json j = cluster_case(sum_start(32, 16), sum_start(32, 16));
  j["program"][0]["body"][0]["src"]["index"][0]["start"]["plus"][0]["axis"] = "nope";
  try {
    case_from_json(j);
    ADD_FAILURE() << "an unknown axis in a term parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(".plus[0].axis"), std::string::npos) << e.what();
  }
  j["program"][0]["body"][0]["src"]["index"][0]["start"]["plus"] = json::array(
      {{{"axis", "a"}}, {{"axis", "a"}}, {{"axis", "a"}}, {{"axis", "a"}}, {{"axis", "a"}}});
  EXPECT_THROW(case_from_json(j), InputError);  // at most 4 terms
}

TEST(IndexSums, TheJsonFormRoundTrips) {
  const Case c = case_from_json(cluster_case(sum_start(32, 16), sum_start(32, 16)));
  const json back = case_to_json(c);
  EXPECT_EQ(back["program"][0]["body"][0]["src"]["index"][0]["start"], sum_start(32, 16));
  EXPECT_EQ(case_from_json(back).program.size(), 1u);
}

TEST(IndexSums, TheMaximumOverEveryCombination) {
  DynStart d{"a", 64, 3};
  d.plus.push_back(DynTerm{"b", 32, false});
  EXPECT_EQ(dyn_max(d, std::vector<std::int64_t>{2, 2}), 64 + 32 + 3);
  d.mod = 50;  // (64a + 32b + 3) % 50 over a, b in {0, 1}: 3, 35, 17, 49
  EXPECT_EQ(dyn_max(d, std::vector<std::int64_t>{2, 2}), 49);
}

TEST(IndexSums, BindingOneTermFoldsItIntoAdd) {
  DynStart d{"i", 16, 1, true};
  d.plus.push_back(DynTerm{"x", 32, false});
  const auto loop_fixed = [](const std::string& name, bool loop) {
    return loop && name == "i" ? std::optional<std::int64_t>(3) : std::nullopt;
  };
  EXPECT_FALSE(dyn_fold(d, loop_fixed).has_value());  // x is left
  EXPECT_EQ(d.axis, "x");
  EXPECT_FALSE(d.loop);
  EXPECT_EQ(d.mul, 32);
  EXPECT_EQ(d.add, 49);
  EXPECT_TRUE(d.plus.empty());
  const auto x_fixed = [](const std::string& name, bool loop) {
    return !loop && name == "x" ? std::optional<std::int64_t>(1) : std::nullopt;
  };
  EXPECT_EQ(dyn_fold(d, x_fixed), 81);
}

TEST(IndexSums, ALoopIndexAndAnAxisSumPerTrip) {
  // Cluster (2,) over x; two trips; trip i of CTA c reads and stores rows 32i + 16c.
  json j = json::parse(R"({
    "format": 1, "name": "loop_sum", "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a", "semantics": "lane"},
    "inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32", "fill": {"pattern": "arange"}}],
    "outputs": [{"name": "y", "shape": [64, 32], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "buf", "kind": "smem", "shape": [16, 32], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}],
      "body": [{"op": "loop", "trip_count": 2, "index": "i", "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [
           {"start": {"loop": "i", "mul": 32, "plus": [{"axis": "x", "mul": 16}]}, "size": 16}]},
         "dst": {"alloc": "buf"}, "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
        {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"}, "dst": {"output": "y", "index": [
           {"start": {"loop": "i", "mul": 32, "plus": [{"axis": "x", "mul": 16}]}, "size": 16}]},
         "wait": true}]}]}]
  })");
  const Outcome o = predicted_and_simulated(case_from_json(j));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(o.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 64 * 32}}));
  EXPECT_EQ(y_at(o, 48 * 32), static_cast<float>(48 * 32));
  // Binding the loop index (the shrinker's step) leaves the axis term.
  Case c = case_from_json(j);
  Body inner = std::get<Loop>(std::get<RunScoped>(c.program[0].v).body[0].v).body;
  bind_loop_index(inner, "i", 1);
  const auto& cp = std::get<CopyGmemToSmem>(inner[0].v);
  ASSERT_TRUE(cp.src_index[0].dyn_start);
  EXPECT_EQ(cp.src_index[0].dyn_start->axis, "x");
  EXPECT_EQ(cp.src_index[0].dyn_start->add, 32);
}

}  // namespace
}  // namespace collfuzz
