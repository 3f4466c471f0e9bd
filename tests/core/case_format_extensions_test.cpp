// The case-format additions for kernels as JAX authors write them (docs/case-format.md): the
// whole-dim index ":", dynamic integer indices from lax.axis_index, shape-() allocations, stored
// expectations keyed by profile, and JAX's stage names.
#include <gtest/gtest.h>

#include "harness/core/errors.h"
#include "harness/core/stage_names.h"
#include "harness/core/stored_expectation.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::first_copy;
using testing::minimal_case_json;

// The minimal case with a source of shape [2, 128, 64] indexed by `index`.
json with_src_index(const json& index) {
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = {2, 128, 64};
  j["program"][0]["body"][0]["src"]["index"] = index;
  return j;
}

TEST(CaseFormatExtensions, WholeDimEntryIsTheWholeDimAndRoundTrips) {
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = {128, 2, 64};
  j["program"][0]["body"][0]["src"]["index"] = {":", 1};
  const Case c = case_from_json(j);
  const auto& e = first_copy(c).src_index[0];
  EXPECT_EQ(e.kind, IndexEntry::Kind::kSlice);
  EXPECT_TRUE(e.whole);
  EXPECT_EQ(e.start, 0);
  EXPECT_EQ(e.size, 128);
  const json back = case_to_json(c);
  EXPECT_EQ(back["program"][0]["body"][0]["src"]["index"], json({":", 1}));
  EXPECT_NE(error_of(with_src_index({"::"})).find("expected \":\""), std::string::npos);
}

TEST(CaseFormatExtensions, DynamicIntegerIndexSqueezesAndStaysInBounds) {
  const Case c = case_from_json(with_src_index({{{"axis", "x"}}}));
  const auto& e = first_copy(c).src_index[0];
  EXPECT_EQ(e.kind, IndexEntry::Kind::kAt);
  ASSERT_TRUE(e.dyn_start.has_value());
  EXPECT_EQ(e.dyn_start->axis, "x");
  EXPECT_EQ(case_to_json(c)["program"][0]["body"][0]["src"]["index"][0],
            json({{"axis", "x"}, {"mul", 1}, {"add", 0}}));
  // Cluster axis x has size 2: x * 1 + 1 reaches 2, past a dim of 2.
  const std::string oob = error_of(with_src_index({{{"axis", "x"}, {"add", 1}}}));
  EXPECT_NE(oob.find("$.program[0].body[0].src.index[0]"), std::string::npos) << oob;
  EXPECT_NE(oob.find("out of bounds"), std::string::npos) << oob;
  EXPECT_NE(error_of(with_src_index({{{"axis", "nope"}}})).find("not a cluster axis"),
            std::string::npos);
  // index_start resolves it per thread.
  EXPECT_EQ(index_start(
                e, [](const std::string&) { return 1; }, 0),
            1);
}

// pl.multiple_of(start, m) around a dynamic start: kept, written back, the value unchanged; a
// multiple below 1 names the field, and a slot (smem.at[i % 2]) takes none.
TEST(CaseFormatExtensions, MultipleOfWrapsADynamicStartAndRoundTrips) {
  const json start = {{"axis", "x"}, {"mul", 64}, {"multiple_of", 64}};
  const Case c = case_from_json(with_src_index({1, {{"start", start}, {"size", 64}}}));
  const auto& e = first_copy(c).src_index[1];
  ASSERT_TRUE(e.dyn_start.has_value());
  EXPECT_EQ(e.dyn_start->multiple_of, 64);
  EXPECT_EQ(index_start(
                e, [](const std::string&) { return 1; }, 0),
            64);
  EXPECT_EQ(case_to_json(c)["program"][0]["body"][0]["src"]["index"][1]["start"],
            json({{"axis", "x"}, {"mul", 64}, {"add", 0}, {"multiple_of", 64}}));
  const std::string zero =
      error_of(with_src_index({1, {{"start", {{"axis", "x"}, {"multiple_of", 0}}}, {"size", 64}}}));
  EXPECT_NE(zero.find("src.index[1].start.multiple_of"), std::string::npos) << zero;
}

TEST(CaseFormatExtensions, CopyToOutputTakesDynamicIndicesAndInBoundsDynamicSlices) {
  json j = minimal_case_json();
  j["outputs"] = {{{"name", "y"}, {"shape", {2, 128, 64}}, {"dtype", "float32"}}};
  j["program"][0]["body"].push_back({{"op", "copy_smem_to_gmem"},
                                     {"src", {{"alloc", "dst"}}},
                                     {"dst", {{"output", "y"}, {"index", {{{"axis", "x"}}}}}}});
  EXPECT_EQ(error_of(j), "");
  // y.at[pl.ds(axis_index("x") * 128, 128)] of a y f32[256, 64]: each CTA its own half.
  j["outputs"][0]["shape"] = {256, 64};
  j["program"][0]["body"][2]["dst"]["index"] = {
      {{"start", {{"axis", "x"}, {"mul", 128}}}, {"size", 128}}};
  EXPECT_EQ(error_of(j), "");
  // The store has no out-of-bounds mode: a slice that CTA 1 would write past the end is refused.
  j["program"][0]["body"][2]["dst"]["index"][0]["start"]["add"] = 64;
  const std::string e = error_of(j);
  EXPECT_NE(e.find("$.program[0].body[2].dst.index[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("[192, 320)"), std::string::npos) << e;
}

TEST(CaseFormatExtensions, ZeroDimBarrierIsUsedWithoutAnIndex) {
  json j = minimal_case_json();
  j["program"][0]["allocs"][1]["num_barriers"] = json::array();
  const Case c = case_from_json(j);
  const Alloc& bar = std::get<RunScoped>(c.program[0].v).allocs[1];
  EXPECT_TRUE(bar.scalar_ref);
  EXPECT_EQ(bar.num_barriers, 1);
  EXPECT_EQ(case_to_json(c)["program"][0]["allocs"][1]["num_barriers"], json::array());
  j["program"][0]["body"][1]["barrier"]["index"] = 0;
  EXPECT_NE(error_of(j).find("0-d barrier"), std::string::npos);
  j["program"][0]["allocs"][1]["num_barriers"] = json::array({1});
  EXPECT_NE(error_of(j).find("num_barriers"), std::string::npos);
}

TEST(CaseFormatExtensions, ScalarSemaphore) {
  json j = minimal_case_json();
  j["program"][0]["allocs"].push_back(
      {{"name", "sem"}, {"kind", "semaphore"}, {"type", "regular"}, {"shape", json::array()}});
  const Case c = case_from_json(j);
  EXPECT_TRUE(std::get<RunScoped>(c.program[0].v).allocs[2].shape.empty());
  EXPECT_EQ(case_to_json(c)["program"][0]["allocs"][2]["shape"], json::array());
  // Only semaphores take shape (): an smem buffer keeps rank 1 or more.
  j["program"][0]["allocs"][0]["shape"] = json::array();
  EXPECT_NE(error_of(j).find("at least 1"), std::string::npos);
}

TEST(StageNames, JaxStagesAdmitTheStagesTheySpan) {
  EXPECT_TRUE(stage_admits("lowering", "estimate"));
  EXPECT_TRUE(stage_admits("lowering", "dialect"));
  EXPECT_TRUE(stage_admits("lowering", "interpret"));
  EXPECT_TRUE(stage_admits("lowering", "trace"));  // jit(f).lower() traces first
  EXPECT_FALSE(stage_admits("lowering", "compile"));
  EXPECT_FALSE(stage_admits("lowering", "launch"));
  EXPECT_TRUE(stage_admits("tracing", "mesh"));
  EXPECT_TRUE(stage_admits("execution", "trace"));
  EXPECT_FALSE(stage_admits("tracing", "launch"));
  EXPECT_TRUE(stage_admits("execution", "run"));
  EXPECT_TRUE(stage_admits("compilation", "compile"));
  EXPECT_TRUE(stage_admits("", "lower"));
  EXPECT_TRUE(stage_admits("lower", "lower"));
  EXPECT_FALSE(stage_admits("lower", "estimate"));  // collfuzz's own names stay exact
  EXPECT_TRUE(is_stage_name("lowering"));
  EXPECT_TRUE(is_stage_name("dialect"));
  EXPECT_FALSE(is_stage_name("lowered"));
}

TEST(StoredExpectation, OneOutcomeOrOnePerProfile) {
  const json single = {{"kind", "completed"}};
  auto s = stored_expectations(single, Profile::kInterpret, "$.expect");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first, Profile::kInterpret);
  EXPECT_EQ(stored_expectation_for(single, Profile::kMosaic, Profile::kInterpret), nullptr);

  const json keyed = {{"mosaic", {{"kind", "deadlock"}}}, {"interpret", {{"kind", "completed"}}}};
  EXPECT_TRUE(is_profile_keyed(keyed));
  s = stored_expectations(keyed, Profile::kMosaic, "$.expect");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first, Profile::kMosaic);
  EXPECT_EQ((*s[0].second)["kind"], "deadlock");
  EXPECT_EQ(s[1].first, Profile::kInterpret);
  EXPECT_EQ((*stored_expectation_for(keyed, Profile::kInterpret, Profile::kMosaic))["kind"],
            "completed");
  EXPECT_TRUE(stored_expectations(json(), Profile::kMosaic, "$.expect").empty());
  try {
    stored_expectations(json{{"mosaic", {{"kind", "completed"}}}, {"gpu", 1}}, Profile::kMosaic,
                        "$.expect");
    ADD_FAILURE() << "an unknown profile key was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collfuzz
