// The case format of SMEM transforms and SMEM slices (docs/case-format.md, "SMEM transforms" and
// "SMEM refs"): what reads, what round-trips, and what is refused with the field named.
#include <gtest/gtest.h>

#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::error_path_of;
using testing::first_copy;
using testing::minimal_case_json;

// The minimal case's destination as f16 (128, 64), with `transforms`.
json transformed(const json& transforms) {
  json j = minimal_case_json();
  j["inputs"][0]["dtype"] = "float16";
  auto& dst = j["program"][0]["allocs"][0];
  dst["dtype"] = "float16";
  dst["transforms"] = transforms;
  return j;
}

const Alloc& dst_alloc(const Case& c) { return std::get<RunScoped>(c.program[0].v).allocs[0]; }

TEST(SmemTransformFormat, TilingThenSwizzleReadAndRoundTrip) {
  const json t = json::parse(R"([{"tiling": [8, 64]}, {"swizzle": 128}])");
  const Case c = case_from_json(transformed(t));
  EXPECT_EQ(dst_alloc(c).transforms.tiling, (Shape{8, 64}));
  EXPECT_EQ(dst_alloc(c).transforms.swizzle, 128);
  EXPECT_EQ(case_to_json(c)["program"][0]["allocs"][0]["transforms"], t);
}

TEST(SmemTransformFormat, OutOfOrderOrRepeatedTransformsAreRefusedWithTheirField) {
  EXPECT_EQ(error_path_of(transformed(json::parse(R"([{"swizzle": 128}, {"tiling": [8, 64]}])"))),
            "$.program[0].allocs[0].transforms[1]");
  EXPECT_NE(error_of(transformed(json::parse(R"([{"swizzle": 64}, {"swizzle": 64}])")))
                .find("a second swizzle"),
            std::string::npos);
  EXPECT_EQ(error_path_of(transformed(json::parse(R"([{"tiling": [8, 8, 8]}])"))),
            "$.program[0].allocs[0].transforms[0].tiling");
  EXPECT_EQ(error_path_of(transformed(json::parse(R"([{"transpose": [1, 0]}])"))),
            "$.program[0].allocs[0].transforms[0].transpose");
}

TEST(SmemTransformFormat, SubByteAndPreHopperTransformsAreNotExpressible) {
  json j = transformed(json::parse(R"([{"tiling": [8, 64]}])"));
  j["program"][0]["allocs"][0]["dtype"] = "int4";
  EXPECT_NE(error_of(j).find("sub-byte"), std::string::npos);
  j = transformed(json::parse(R"([{"tiling": [8, 64]}])"));
  j["target"]["arch"] = "sm_80";
  EXPECT_NE(error_of(j).find("pre-Hopper"), std::string::npos);
}

TEST(SmemTransformFormat, ASliceOfAnSmemRefReadsStaticOrDynamicAndRoundTrips) {
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = {64, 64};
  j["program"][0]["body"][0]["dst"]["index"] =
      json::parse(R"([{"start": {"axis": "x", "mul": 64}, "size": 64}])");
  const Case c = case_from_json(j);
  ASSERT_TRUE(first_copy(c).dst_slice.has_value());
  EXPECT_EQ(first_copy(c).dst_slice->size, 64);
  EXPECT_EQ(case_to_json(c)["program"][0]["body"][0]["dst"]["index"],
            json::parse(R"([{"start": {"axis": "x", "mul": 64, "add": 0}, "size": 64}])"));
  // Out of bounds for axis index 1: [64 + 64, ...) past 128 rows.
  j["program"][0]["body"][0]["dst"]["index"] =
      json::parse(R"([{"start": {"axis": "x", "mul": 96}, "size": 64}])");
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.index[0]");
  // A loop index, and a slice before an integer index, are refused.
  j["program"][0]["body"][0]["dst"]["index"] = json::parse(R"([{"start": 0, "size": 64}, 0])");
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.index[0]");
}

TEST(SmemTransformFormat, ADynamicSliceOfATiledDimMovesByWholeTiles) {
  json j = transformed(json::parse(R"([{"tiling": [8, 64]}, {"swizzle": 128}])"));
  j["inputs"][0]["shape"] = {64, 64};
  j["program"][0]["body"][0]["dst"]["index"] =
      json::parse(R"([{"start": {"axis": "x", "mul": 4}, "size": 64}])");
  EXPECT_NE(error_of(j).find("multiples of the tile"), std::string::npos);
  j["program"][0]["body"][0]["dst"]["index"] =
      json::parse(R"([{"start": {"axis": "x", "mul": 64}, "size": 64}])");
  EXPECT_EQ(error_of(j), "");
}

TEST(SmemTransformFormat, IntegerIndicesIntoTiledDimsAndVectorLoadsOfTransformedRefsAreRefused) {
  json j = transformed(json::parse(R"([{"tiling": [8, 64]}])"));
  j["inputs"][0]["shape"] = {64};
  j["program"][0]["body"][0]["dst"]["index"] = {0};
  EXPECT_NE(error_of(j).find("integer index into a tiled dim"), std::string::npos);
}

// docs/case-format.md, "Transposed SMEM refs".
TEST(SmemTransformFormat, ATransposeOfACopysSmemRefReadsAndRoundTrips) {
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = {64, 128};
  j["program"][0]["body"][0]["dst"]["transpose"] = {1, 0};
  const Case c = case_from_json(j);
  ASSERT_TRUE(first_copy(c).dst_transpose.has_value());
  EXPECT_EQ(first_copy(c).dst_transpose->permutation, (std::vector<std::int64_t>{1, 0}));
  EXPECT_FALSE(first_copy(c).dst_transpose->via_transpose_ref);
  EXPECT_EQ(case_to_json(c)["program"][0]["body"][0]["dst"], j["program"][0]["body"][0]["dst"]);
  j["program"][0]["body"][0]["dst"]["transpose_ref"] = true;
  EXPECT_TRUE(first_copy(case_from_json(j)).dst_transpose->via_transpose_ref);
  EXPECT_EQ(case_to_json(case_from_json(j))["program"][0]["body"][0]["dst"]["transpose_ref"], true);
}

TEST(SmemTransformFormat, ABadTransposeIsRefusedWithItsField) {
  json j = minimal_case_json();
  auto& dst = j["program"][0]["body"][0]["dst"];
  dst["transpose"] = {0};
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose");
  dst["transpose"] = {1, 1};
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose[1]");
  dst["transpose"] = {2, 0};
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose[0]");
  dst["transpose"] = {0, 1, 2};
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose");
  dst.erase("transpose");
  dst["transpose_ref"] = true;
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose_ref");
  dst.erase("transpose_ref");
  dst["transpose"] = {0, 1};
  j["target"]["arch"] = "sm_80";
  EXPECT_NE(error_of(j).find("pre-Hopper"), std::string::npos);
}

TEST(SmemTransformFormat, AWarpgroupTransposeThatReordersTheTiledDimsIsNotExpressible) {
  json j = transformed(json::parse(R"([{"tiling": [8, 64]}])"));
  j["inputs"][0]["shape"] = {64, 128};
  j["program"][0]["body"][0]["dst"]["transpose"] = {1, 0};
  EXPECT_EQ(error_of(j), "");  // Lane: the transpose is undone on the GMEM side
  j["target"]["semantics"] = "warpgroup";
  EXPECT_EQ(error_path_of(j), "$.program[0].body[0].dst.transpose");
  EXPECT_NE(error_of(j).find("reorders the tiled dims"), std::string::npos);
}

TEST(SmemTransformFormat, AWarpgroupTransposeOfADimOfSizeOneIsNotExpressible) {
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = {1, 64};
  j["program"][0]["allocs"][0]["shape"] = {64, 1};
  j["program"][0]["body"][0]["dst"]["transpose"] = {1, 0};
  EXPECT_EQ(error_of(j), "");  // Lane: the transpose is undone on the GMEM side, as written
  j["target"]["semantics"] = "warpgroup";
  EXPECT_NE(error_of(j).find("moves a dim of size 1"), std::string::npos);
  j["inputs"][0]["shape"] = {2, 64};
  j["program"][0]["allocs"][0]["shape"] = {64, 2};
  EXPECT_EQ(error_of(j), "");
}

TEST(SmemTransformFormat, ATransposedStoreWritesAnOutputSliceOfTheTransposedShape) {
  json j = minimal_case_json();
  j["outputs"] = json::parse(R"([{"name": "o", "shape": [64, 128], "dtype": "float32"}])");
  j["program"][0]["body"].push_back(json::parse(
      R"({"op": "copy_smem_to_gmem", "src": {"alloc": "dst", "transpose": [1, 0]},
          "dst": {"output": "o"}})"));
  const Case c = case_from_json(j);
  const auto& st = std::get<CopySmemToGmem>(std::get<RunScoped>(c.program[0].v).body[2].v);
  ASSERT_TRUE(st.src_transpose.has_value());
  j["outputs"][0]["shape"] = {128, 64};
  EXPECT_EQ(error_path_of(j), "$.program[0].body[2].dst");
}

}  // namespace
}  // namespace collfuzz
