// The arange and explicit `values` fills (docs/case-format.md "Fills"): the elements they give,
// exact float values both ways, the case reader's refusals (each naming its JSON path) and the
// writer's round trip.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/core/element_value.h"
#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;

ArraySpec arange(DType d, Shape s, std::int64_t start, std::int64_t step) {
  ArraySpec a;
  a.name = "x";
  a.shape = std::move(s);
  a.dtype = d;
  a.fill.pattern = FillPattern::kArange;
  a.fill.start = start;
  a.fill.step = step;
  return a;
}

TEST(FillArange, StartsAtStartAndSteps) {
  const ArraySpec a = arange(DType::kInt32, {2, 3}, -3, 2);
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(fill_element_bits(a, i), static_cast<std::uint32_t>(-3 + 2 * i)) << i;
  }
  const ArraySpec f = arange(DType::kFloat32, {4}, 0, 1);  // jnp.arange(4, dtype=jnp.float32)
  EXPECT_EQ(fill_element_bits(f, 0), 0u);                  // 0.0f, which iota never holds
  EXPECT_EQ(fill_element_bits(f, 3), 0x40400000u);         // 3.0f
  const ArraySpec h = arange(DType::kFloat16, {3}, 4, -3);
  EXPECT_EQ(fill_element_bits(h, 0), 0x4400u);  // 4.0
  EXPECT_EQ(fill_element_bits(h, 2), 0xC000u);  // -2.0
  const ArraySpec n = arange(DType::kInt4, {3}, 7, -7);
  const auto bytes = fill_bytes(n);  // 7, 0, -7 -> nibbles 7, 0, 9
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 0x07);
  EXPECT_EQ(bytes[1], 0x09);
}

TEST(FillValues, ElementsAreTheStoredBits) {
  ArraySpec a;
  a.shape = {3};
  a.dtype = DType::kBFloat16;
  a.fill.pattern = FillPattern::kValues;
  a.fill.values = std::make_shared<const std::vector<std::uint64_t>>(
      std::vector<std::uint64_t>{0x3F80, 0xBFC0, 0x8000});
  EXPECT_EQ(fill_element_bits(a, 1), 0xBFC0u);
  const auto bytes = fill_bytes(a);
  ASSERT_EQ(bytes.size(), 6u);
  EXPECT_EQ(load_element(bytes, a.dtype, 2), 0x8000u);
}

// Every finite value of every small float dtype reads back to its own bit pattern (-0 included);
// NaN and infinities have none.
TEST(ElementValue, EverySmallFloatRoundTrips) {
  for (DType d : {DType::kFloat8E4M3FN, DType::kFloat8E5M2, DType::kBFloat16, DType::kFloat16}) {
    const std::uint64_t count = 1ull << dtype_bits(d);
    int finite = 0;
    for (std::uint64_t b = 0; b < count; ++b) {
      const double v = float_element_value(d, b);
      const auto back = exact_float_bits(d, v);
      if (std::isfinite(v)) {
        ++finite;
        ASSERT_TRUE(back.has_value()) << dtype_name(d) << " bits " << b << " value " << v;
        ASSERT_EQ(*back, b) << dtype_name(d) << " value " << v;
      } else {
        ASSERT_FALSE(back.has_value()) << dtype_name(d) << " bits " << b;
      }
    }
    EXPECT_GT(finite, static_cast<int>(count) * 3 / 4) << dtype_name(d);
  }
}

TEST(ElementValue, InexactValuesHaveNoBits) {
  EXPECT_EQ(exact_float_bits(DType::kFloat8E4M3FN, 448.0), 0x7Eu);  // its largest value
  EXPECT_FALSE(exact_float_bits(DType::kFloat8E4M3FN, 480.0));      // the NaN pattern's place
  EXPECT_FALSE(exact_float_bits(DType::kFloat8E4M3FN, 1.0625));
  EXPECT_EQ(exact_float_bits(DType::kFloat8E5M2, 57344.0), 0x7Bu);
  EXPECT_FALSE(exact_float_bits(DType::kFloat8E5M2, 65536.0));
  EXPECT_FALSE(exact_float_bits(DType::kBFloat16, 0.1));
  EXPECT_EQ(exact_float_bits(DType::kBFloat16, -1.5), 0xBFC0u);
  EXPECT_EQ(exact_float_bits(DType::kFloat16, std::ldexp(1.0, -24)), 1u);  // smallest subnormal
  EXPECT_FALSE(exact_float_bits(DType::kFloat16, std::ldexp(1.0, -25)));
  EXPECT_FALSE(exact_float_bits(DType::kFloat16, 65520.0));
  EXPECT_FALSE(exact_float_bits(DType::kFloat32, 0.1));
  EXPECT_EQ(exact_float_bits(DType::kFloat32, 0.1f), 0x3DCCCCCDu);
  EXPECT_FALSE(exact_float_bits(DType::kFloat32, 1e39));
  EXPECT_EQ(exact_float_bits(DType::kFloat32, -0.0), 0x80000000u);
  EXPECT_EQ(exact_float_bits(DType::kFloat64, 0.1), std::bit_cast<std::uint64_t>(0.1));
  EXPECT_FALSE(exact_float_bits(DType::kFloat64, INFINITY));
}

json case_with_fill(const std::string& dtype, json shape, json fill) {
  json j = testing::minimal_case_json();
  j["inputs"][0]["dtype"] = dtype;
  j["inputs"][0]["shape"] = std::move(shape);
  j["inputs"][0]["fill"] = std::move(fill);
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  j["program"][0]["allocs"][0]["shape"] = j["inputs"][0]["shape"];
  return j;
}

TEST(FillJson, ArangeAndValuesParseAndRoundTrip) {
  const json ar =
      case_with_fill("int8", {2, 4}, {{"pattern", "arange"}, {"start", -4}, {"step", 3}});
  const Case a = testing::parse(ar);
  EXPECT_EQ(a.inputs[0].fill.pattern, FillPattern::kArange);
  EXPECT_EQ(fill_element_bits(a.inputs[0], 7), 17u);
  const json written = case_to_json(a);
  EXPECT_EQ(written["inputs"][0]["fill"], ar["inputs"][0]["fill"]);
  // start and step default to jnp.arange's 0 and 1
  const Case d = testing::parse(case_with_fill("int8", {4}, {{"pattern", "arange"}}));
  EXPECT_EQ(fill_element_bits(d.inputs[0], 3), 3u);

  const json vals = case_with_fill("float16", {2, 2},
                                   {{"pattern", "values"}, {"values", {0.5, -0.0, 65504, -3.25}}});
  const Case v = testing::parse(vals);
  EXPECT_EQ(fill_element_bits(v.inputs[0], 0), 0x3800u);
  EXPECT_EQ(fill_element_bits(v.inputs[0], 1), 0x8000u);
  EXPECT_EQ(fill_element_bits(v.inputs[0], 2), 0x7BFFu);
  const json back = case_to_json(v)["inputs"][0]["fill"]["values"];
  ASSERT_EQ(back.size(), 4u);
  EXPECT_TRUE(std::signbit(back[1].get<double>()));
  EXPECT_EQ(back[3].get<double>(), -3.25);
  EXPECT_TRUE(testing::parse(case_to_json(v)).inputs[0].fill == v.inputs[0].fill);

  const Case big = testing::parse(case_with_fill(
      "uint64", {2}, {{"pattern", "values"}, {"values", {18446744073709551615ull, 0}}}));
  EXPECT_EQ(fill_element_bits(big.inputs[0], 0), ~0ull);
  EXPECT_EQ(case_to_json(big)["inputs"][0]["fill"]["values"][0].get<std::uint64_t>(), ~0ull);
  const Case neg =
      testing::parse(case_with_fill("int4", {2}, {{"pattern", "values"}, {"values", {-8, 7}}}));
  EXPECT_EQ(fill_element_bits(neg.inputs[0], 0), 8u);
  EXPECT_EQ(case_to_json(neg)["inputs"][0]["fill"]["values"], json({-8, 7}));
}

TEST(FillJson, BadFillsNameTheirField) {
  const std::string f = "$.inputs[0].fill";
  // arange past the fill range of the dtype (int8: [-128, 127]; float32: [-2047, 2047])
  EXPECT_EQ(testing::error_path_of(case_with_fill("int8", {200}, {{"pattern", "arange"}})),
            f + ".step");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("float32", {4}, {{"pattern", "arange"}, {"start", 3000}})),
            f + ".start");
  EXPECT_EQ(
      testing::error_path_of(case_with_fill("int8", {4}, {{"pattern", "arange"}, {"step", 1.5}})),
      f + ".step");
  EXPECT_EQ(testing::error_path_of(case_with_fill("int8", {4}, {{"pattern", "iota"}, {"step", 1}})),
            f + ".step");
  EXPECT_EQ(
      testing::error_path_of(case_with_fill("int8", {4}, {{"pattern", "arange"}, {"values", {1}}})),
      f + ".values");
  // values: missing, of the wrong length, too many, the wrong type, inexact, out of range
  EXPECT_EQ(testing::error_path_of(case_with_fill("int8", {2}, {{"pattern", "values"}})),
            f + ".values");
  EXPECT_EQ(
      testing::error_path_of(case_with_fill("int8", {2}, {{"pattern", "values"}, {"values", {1}}})),
      f + ".values");
  EXPECT_EQ(
      testing::error_path_of(case_with_fill("int8", {3}, {{"pattern", "values"}, {"values", 1}})),
      f + ".values");
  json many = json::array();
  for (int i = 0; i < 65537; ++i) many.push_back(0);
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("int8", {65537}, {{"pattern", "values"}, {"values", many}})),
            f + ".values");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("float32", {2}, {{"pattern", "values"}, {"values", {1, "2"}}})),
            f + ".values[1]");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("float32", {2}, {{"pattern", "values"}, {"values", {1, 0.1}}})),
            f + ".values[1]");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("bfloat16", {2}, {{"pattern", "values"}, {"values", {257, 1}}})),
            f + ".values[0]");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("int8", {2}, {{"pattern", "values"}, {"values", {1, 128}}})),
            f + ".values[1]");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("int32", {2}, {{"pattern", "values"}, {"values", {1, 2.5}}})),
            f + ".values[1]");
  EXPECT_EQ(testing::error_path_of(
                case_with_fill("float32", {2}, {{"pattern", "values"}, {"values", {16777217, 1}}})),
            f + ".values[0]");
}

TEST(FillJson, EqualFillsCompareEqual) {
  Fill a;
  a.pattern = FillPattern::kValues;
  a.values = std::make_shared<const std::vector<std::uint64_t>>(std::vector<std::uint64_t>{1, 2});
  Fill b = a;
  b.values = std::make_shared<const std::vector<std::uint64_t>>(std::vector<std::uint64_t>{1, 2});
  EXPECT_TRUE(a == b);
  b.values = std::make_shared<const std::vector<std::uint64_t>>(std::vector<std::uint64_t>{1, 3});
  EXPECT_FALSE(a == b);
  Fill c, d;
  c.pattern = d.pattern = FillPattern::kArange;
  d.step = 2;
  EXPECT_FALSE(c == d);
}

}  // namespace
}  // namespace collfuzz
