// Iotas in vector values (docs/case-format.md, "vector_store"): {"iota": {"dimension": d,
// "vec_size": v}}, JAX's plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, d),
// plgpu.Layout.WG_STRIDED(shape, vec_size=v)). Each element is its index along `d` as the dtype
// (integers wrap, floats round to nearest even); the cast's layout must have 128 * v divide the
// count (lower.vector.iota_layout, at the iota's place in the jaxpr under both semantics), and
// under Lane it is the iota's register layout (lower.vector.incompatible_layouts against a load).
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/vector_arith.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::op;
using simtest::predicted_and_simulated;
using simtest::tile;
using simtest::tile_store_case;

json iota(std::int64_t dim, std::int64_t vec) {
  return {{"iota", {{"dimension", dim}, {"vec_size", vec}}}};
}

// tile_store_case with the tile, input and output reshaped to `shape`.
json shaped(json j, const json& shape) {
  j["inputs"][0]["shape"] = shape;
  j["outputs"][0]["shape"] = shape;
  j["program"][0]["allocs"][0]["shape"] = shape;
  return j;
}

TEST(VectorIota, EachElementIsItsIndexAsTheDtype) {
  EXPECT_EQ(vector_iota(DType::kInt32, 300), 300u);
  EXPECT_EQ(vector_iota(DType::kInt8, 130), 130u);  // -126 as int8: index_cast wraps
  EXPECT_EQ(vector_iota(DType::kUInt8, 257), 1u);
  EXPECT_EQ(vector_iota(DType::kFloat32, 3), 0x40400000u);
  // bfloat16: 8 significant bits; 257 is a tie between 256 and 258: the even significand, 256;
  // 259 between 258 and 260: 260.
  EXPECT_EQ(vector_iota(DType::kBFloat16, 257), 0x4380u);
  EXPECT_EQ(vector_iota(DType::kBFloat16, 259), 0x4382u);
  EXPECT_EQ(vector_iota(DType::kFloat16, 2049), 0x6800u);  // 2048
}

TEST(VectorIota, TilePlusIotaAlongEitherDimensionUnderBothSemantics) {
  // int32[2, 128] = arange from 0; y = tile + iota(d): 128r + c + (d == 0 ? r : c).
  for (const std::int64_t dim : {0, 1}) {
    for (const char* semantics : {"lane", "warpgroup"}) {
      const json j = shaped(tile_store_case("int32", op("add", tile(), iota(dim, 2)), semantics),
                            json{2, 128});
      const Outcome o = predicted_and_simulated(case_from_json(j));
      ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics << " " << dim;
      for (std::int64_t r = 0; r < 2; ++r) {
        for (std::int64_t c = 0; c < 128; ++c) {
          std::int32_t got = 0;
          std::memcpy(&got, o.outputs.at(0).bytes.data() + (r * 128 + c) * 4, 4);
          ASSERT_EQ(got, 128 * r + c + (dim == 0 ? r : c)) << semantics << " " << r << "," << c;
        }
      }
    }
  }
}

// The mosaic profile's diagnostic of `j` on the reference and on the lowering.
void expect_rule(const json& j, const std::string& rule, const std::string& stage,
                 const std::string& message = "") {
  const Case k = case_from_json(j);
  const Prediction p = predict(k, Profile::kMosaic);
  ASSERT_TRUE(p.outcome.diagnostic.has_value()) << j["program"].dump();
  EXPECT_EQ(p.outcome.diagnostic->rule, rule);
  EXPECT_EQ(p.outcome.diagnostic->stage, stage);
  if (!message.empty()) {
    EXPECT_EQ(p.outcome.diagnostic->message, message);
  }
  const Diagnostic lowered = simtest::lower_rejected(k);
  EXPECT_EQ(lowered.rule, rule);
  EXPECT_EQ(lowered.stage, stage);
  if (!message.empty()) {
    EXPECT_EQ(lowered.message, message);
  }
  EXPECT_EQ(predict(k, Profile::kInterpret).outcome.kind, OutcomeKind::kCompleted);
}

TEST(VectorIota, ALayoutWhoseVectorDoesNotDivideTheCountIsRefusedAtTheIota) {
  // 128 int16 elements cast to vec_size 2: under both semantics, at stage lower.
  for (const char* semantics : {"lane", "warpgroup"}) {
    expect_rule(
        shaped(tile_store_case("int16", op("add", tile(), iota(0, 2)), semantics), json{128}),
        "lower.vector.iota_layout", "lower",
        "(WGStridedFragLayout(shape=(128,), vec_size=2), 128)");
  }
}

TEST(VectorIota, UnderLaneTheFirstRuleInPythonsOrderWins) {
  // 64 elements: the iota's layout and the tile's strided load both fail; the one evaluated
  // first (the left operand) is the one JAX raises.
  const json iota_first =
      shaped(tile_store_case("int32", op("add", iota(0, 1), tile()), "lane"), json{64});
  expect_rule(iota_first, "lower.vector.iota_layout", "lower",
              "(WGStridedFragLayout(shape=(64,), vec_size=1), 128)");
  const json load_first =
      shaped(tile_store_case("int32", op("add", tile(), iota(0, 1)), "lane"), json{64});
  expect_rule(load_first, "lower.vector.strided_elements", "lower");
  // Warpgroup: the iota's cast is built at stage lower, before the layout inference.
  expect_rule(
      shaped(tile_store_case("int32", op("add", tile(), iota(0, 1)), "warpgroup"), json{64}),
      "lower.vector.iota_layout", "lower");
}

TEST(VectorIota, UnderLaneAnIotaOfAnotherVectorLengthThanTheTileIsIncompatible) {
  // float32[256]: the load's vec_size is 2; an iota cast to 1 differs (Lane only).
  expect_rule(tile_store_case("float32", op("add", tile(), iota(0, 1)), "lane"),
              "lower.vector.incompatible_layouts", "lower", "Incompatible FragmentedArray layouts");
  const Outcome o = predicted_and_simulated(
      case_from_json(tile_store_case("float32", op("add", tile(), iota(0, 1)), "warpgroup")));
  EXPECT_EQ(o.kind, OutcomeKind::kCompleted);
  // An 8-bit value: the iota is no arithmetic, so `tile ^ iota` lowers (vec_size 2 on 256 uint8
  // elements is the load's: min(8, 2)).
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Outcome u8 = predicted_and_simulated(
        case_from_json(tile_store_case("uint8", op("xor", tile(), iota(0, 2)), semantics)));
    EXPECT_EQ(u8.kind, OutcomeKind::kCompleted) << semantics;
  }
}

void expect_refused(const json& value, const std::string& field, const std::string& words) {
  simtest::expect_parse_refused(tile_store_case("int16", value, "lane"), field, words);
}

TEST(VectorIota, TheParserNamesABadDimensionOrVectorLength) {
  const std::string at = "$.program[0].body[2].value.iota";
  expect_refused(iota(1, 1), at + ".dimension", "dimension 1 of a value of rank 1");
  expect_refused(iota(0, 8), at + ".vec_size", "up to 4");
  expect_refused(iota(0, 3), at + ".vec_size", "vec_size 3");
  // Register vectors that cross rows (int16[128, 2] in vectors of 4): JAX computes their indices
  // wrong (known JAX bug iota_strided_vector_crosses_rows), so no case holds one.
  simtest::expect_parse_refused(shaped(tile_store_case("int16", iota(0, 4), "lane"), json{128, 2}),
                                at + ".vec_size", "iota_strided_vector_crosses_rows");
  EXPECT_NO_THROW(
      case_from_json(shaped(tile_store_case("int16", iota(0, 2), "lane"), json{128, 2})));
  // Absent, vec_size is the strided layout's (int16[256]: min(4, 2) = 2), and written out.
  const json written = case_to_json(
      case_from_json(tile_store_case("int16", json{{"iota", {{"dimension", 0}}}}, "lane")));
  EXPECT_EQ(written["program"][0]["body"][2]["value"], iota(0, 2));
}

json bare_iota(std::int64_t dim) {
  return {{"iota", {{"dimension", dim}, {"layout_cast", false}}}};
}

TEST(VectorIota, LaneRefusesAnIotaWithNoLayoutCastAtItsPlaceInTheJaxpr) {
  // _iota_lowering has no output layout hint, whatever the shape (int32[2, 128], 128 too).
  const std::string message =
      "Failed to infer the output layout of the iota. Please apply plgpu.layout_cast to its "
      "output right after its creation.";
  for (const json& shape : {json{2, 128}, json{128}}) {
    expect_rule(shaped(tile_store_case("int32", op("add", tile(), bare_iota(0)), "lane"), shape),
                "lower.vector.iota_uncast", "lower", message);
  }
  // 64 elements: the left operand's rule comes first (the tile's strided load, or the iota's).
  expect_rule(shaped(tile_store_case("int32", op("add", tile(), bare_iota(0)), "lane"), json{64}),
              "lower.vector.strided_elements", "lower");
  expect_rule(shaped(tile_store_case("int32", op("add", bare_iota(0), tile()), "lane"), json{64}),
              "lower.vector.iota_uncast", "lower", message);
}

TEST(VectorIota, WarpgroupLaysOutAnIotaWithNoCastAsALoad) {
  // int32[2, 128]: y = iota(0) ^ tile = (128r + c) ^ r, on the reference and the simulator.
  const Outcome o = predicted_and_simulated(case_from_json(shaped(
      tile_store_case("int32", op("xor", bare_iota(0), tile()), "warpgroup"), json{2, 128})));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t r = 0; r < 2; ++r) {
    for (std::int64_t c = 0; c < 128; ++c) {
      std::int32_t got = 0;
      std::memcpy(&got, o.outputs.at(0).bytes.data() + (r * 128 + c) * 4, 4);
      ASSERT_EQ(got, (128 * r + c) ^ r) << r << "," << c;
    }
  }
  // 64 and 192 elements: no strided layout (the layout inference's generic message, stage
  // dialect); the iota's own count counts, stored alone or with a load.
  for (const json& shape : {json{64}, json{3, 64}}) {
    expect_rule(shaped(tile_store_case("int32", bare_iota(0), "warpgroup"), shape),
                "dialect.vector.layout_inference", "dialect",
                "Failed to infer a possible set of layouts. This should only happen if "
                "user-provided layout casts are unsatisfiable. To dump the constraint system for "
                "debugging, use `MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`.");
  }
}

TEST(VectorIota, TheParserReadsAndWritesAnIotaWithNoLayoutCast) {
  const std::string at = "$.program[0].body[2].value.iota";
  const json written =
      case_to_json(case_from_json(tile_store_case("int16", bare_iota(0), "warpgroup")));
  EXPECT_EQ(written["program"][0]["body"][2]["value"], bare_iota(0));
  expect_refused(json{{"iota", {{"dimension", 0}, {"layout_cast", true}}}}, at + ".layout_cast",
                 "leave it out");
  expect_refused(json{{"iota", {{"dimension", 0}, {"layout_cast", false}, {"vec_size", 1}}}},
                 at + ".vec_size", "has no vec_size");
  expect_refused(json{{"iota", {{"dimension", 0}, {"layout_cast", 0}}}}, at + ".layout_cast", "");
  // The strided layout Warpgroup would infer (int16[128, 2]: vec_size 2 of 256 elements)
  // holds; uint8[256, 1] (vec_size 2) crosses rows.
  EXPECT_NO_THROW(
      case_from_json(shaped(tile_store_case("int16", bare_iota(0), "warpgroup"), json{128, 2})));
  simtest::expect_parse_refused(
      shaped(tile_store_case("uint8", bare_iota(0), "warpgroup"), json{256, 1}),
      at + ".layout_cast", "iota_strided_vector_crosses_rows");
}

}  // namespace
}  // namespace collfuzz
