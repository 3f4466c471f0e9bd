// Conversions in vector values (docs/case-format.md, "vector_store": `{"convert": {"from",
// "value"}}`, `value.astype(dtype)`): the parser holds the dtypes the case language converts
// between and names the field otherwise, the JSON form round-trips, each conversion rounds, wraps
// or truncates as the hardware and as XLA on the CPU do, the reference and the simulator agree on
// the stored values, and under Lane a binary op on a converted value of another register layout is
// rejected by the reference and the lowering alike.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/element_value.h"
#include "harness/core/errors.h"
#include "harness/core/vector_arith.h"
#include "harness/core/vector_layout.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::parse_error;
using simtest::predicted_and_simulated;

// One CTA: x32 (float32[n/128, 128]: (i - n/2) * 0.3125 + 2^-12) and x16 (float16[n/128, 128]:
// (i % 64) / 2) are copied into t32 and t16; `value` is stored into y (dtype `out`, n elements).
json convert_case(const json& value, const std::string& out, std::int64_t n,
                  const std::string& semantics = "lane") {
  json x32 = json::array();
  json x16 = json::array();
  for (std::int64_t i = 0; i < n; ++i) {
    x32.push_back(static_cast<double>(i - n / 2) * 0.3125 + 1.0 / 4096);
    x16.push_back(static_cast<double>(i % 64) * 0.5);
  }
  json j = json::parse(R"({
    "format": 1, "name": "vector_convert", "mesh": {},
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "t32", "kind": "smem", "dtype": "float32"},
        {"name": "t16", "kind": "smem", "dtype": "float16"},
        {"name": "bar", "kind": "barrier", "num_barriers": 2}],
      "body": [
        {"op": "copy_gmem_to_smem", "src": {"input": "x32"}, "dst": {"alloc": "t32"},
         "barrier": {"alloc": "bar", "index": 0}},
        {"op": "copy_gmem_to_smem", "src": {"input": "x16"}, "dst": {"alloc": "t16"},
         "barrier": {"alloc": "bar", "index": 1}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 1}},
        {"op": "vector_store", "dst": {"output": "y"}}]}]
  })");
  j["target"] = {{"arch", "sm_90a"}, {"semantics", semantics}};
  const json shape = json::array({n / 128, 128});  // a TMA box row holds at most 256 elements
  json x32_spec = {{"name", "x32"}, {"dtype", "float32"}};
  x32_spec["shape"] = shape;
  x32_spec["fill"] = {{"pattern", "values"}, {"values", x32}};
  json x16_spec = {{"name", "x16"}, {"dtype", "float16"}};
  x16_spec["shape"] = shape;
  x16_spec["fill"] = {{"pattern", "values"}, {"values", x16}};
  j["inputs"] = json::array({x32_spec, x16_spec});
  json y = {{"name", "y"}, {"dtype", out}};
  y["shape"] = shape;
  j["outputs"] = json::array({y});
  j["program"][0]["allocs"][0]["shape"] = shape;
  j["program"][0]["allocs"][1]["shape"] = shape;
  j["program"][0]["body"][4]["value"] = value;
  return j;
}

json load(const std::string& alloc) { return {{"load", {{"alloc", alloc}}}}; }
json convert(const std::string& from, const json& value) {
  return {{"convert", {{"from", from}, {"value", value}}}};
}

std::uint64_t bits_of(DType d, double v) { return exact_float_bits(d, v).value(); }

TEST(VectorConvert, TheParserNamesWhatTheCaseLanguageDoesNotConvert) {
  EXPECT_NE(parse_error(convert_case(convert("float16", load("t16")), "float16", 128))
                .find("$.program[0].body[4].value.convert.from: the value is float16 already"),
            std::string::npos);
  EXPECT_NE(
      parse_error(convert_case(convert("float64", load("t16")), "float16", 128))
          .find("$.program[0].body[4].value.convert.from: a conversion from float64 to float16"),
      std::string::npos);
  // The operand has the `from` dtype: t16 is no float32 ref.
  EXPECT_NE(parse_error(convert_case(convert("float32", load("t16")), "float16", 128))
                .find("$.program[0].body[4].value.convert.value.load: the loaded ref has dtype "
                      "float16, not float32, the dtype of the value there"),
            std::string::npos);
}

TEST(VectorConvert, TheJsonFormRoundTrips) {
  const json value = {{"add", {convert("float32", load("t32")), load("t16")}}};
  const Case c = case_from_json(convert_case(value, "float16", 128));
  const json written = case_to_json(c);
  const json& v = written["program"][0]["body"][4]["value"];
  EXPECT_EQ(v["add"][0]["convert"]["from"], "float32");
  EXPECT_EQ(case_to_json(case_from_json(written)), written);
}

TEST(VectorConvert, EightBitConversionsAreExactWrapOrSaturate) {
  const auto hw = ComputedBy::kHardware;
  const auto xla = ComputedBy::kXlaCpu;
  // Every int8 and uint8 is exact in bfloat16 (the inline-PTX path of int8 -> bf16 included).
  for (int v = -128; v < 128; ++v) {
    EXPECT_EQ(vector_convert(DType::kInt8, DType::kBFloat16, static_cast<std::uint8_t>(v), hw).bits,
              bits_of(DType::kBFloat16, v));
  }
  EXPECT_EQ(vector_convert(DType::kUInt8, DType::kFloat16, 255, hw).bits,
            bits_of(DType::kFloat16, 255));
  // int32 -> int8 wraps; int8 -> uint16 sign-extends first.
  EXPECT_EQ(vector_convert(DType::kInt32, DType::kInt8, 300, hw).bits, 44u);
  EXPECT_EQ(vector_convert(DType::kInt8, DType::kUInt16, 0x80, hw).bits, 0xFF80u);
  // float32 -> int8: truncated; outside int8 unspecified on the hardware, saturated by XLA.
  EXPECT_EQ(vector_convert(DType::kFloat32, DType::kInt8, bits_of(DType::kFloat32, -2.5), hw).bits,
            0xFEu);
  const VectorElement out =
      vector_convert(DType::kFloat32, DType::kInt8, bits_of(DType::kFloat32, 200.0), hw);
  EXPECT_TRUE(out.unspecified);
  EXPECT_EQ(
      vector_convert(DType::kFloat32, DType::kInt8, bits_of(DType::kFloat32, 200.0), xla).bits,
      127u);
  EXPECT_EQ(
      vector_convert(DType::kFloat32, DType::kUInt8, bits_of(DType::kFloat32, -3.0), xla).bits, 0u);
}

TEST(VectorConvert, EachConversionRoundsWrapsOrTruncates) {
  const auto hw = ComputedBy::kHardware;
  const auto xla = ComputedBy::kXlaCpu;
  // float32 -> float16: 1 + 2^-11 is a tie, to even: 1; 65520 overflows to inf.
  EXPECT_EQ(
      vector_convert(DType::kFloat32, DType::kFloat16, bits_of(DType::kFloat32, 1 + 0x1p-11), hw)
          .bits,
      bits_of(DType::kFloat16, 1.0));
  EXPECT_EQ(
      vector_convert(DType::kFloat32, DType::kFloat16, bits_of(DType::kFloat32, 65520), hw).bits,
      0x7c00u);
  // int32 -> int16 wraps; int16 -> int32 sign-extends; uint16 -> int32 zero-extends.
  EXPECT_EQ(vector_convert(DType::kInt32, DType::kInt16, 0x12345u, hw).bits, 0x2345u);
  EXPECT_EQ(vector_convert(DType::kInt16, DType::kInt32, 0xffffu, hw).bits, 0xffffffffu);
  EXPECT_EQ(vector_convert(DType::kUInt16, DType::kInt32, 0xffffu, hw).bits, 0xffffu);
  // float -> int truncates toward zero; outside the range: unspecified on the hardware, XLA
  // saturates (and NaN -> 0).
  EXPECT_EQ(
      vector_convert(DType::kFloat32, DType::kInt32, bits_of(DType::kFloat32, -2.75), hw).bits,
      0xfffffffeu);
  const std::uint64_t big = bits_of(DType::kFloat32, 1e10);
  EXPECT_TRUE(vector_convert(DType::kFloat32, DType::kInt32, big, hw).unspecified);
  EXPECT_EQ(vector_convert(DType::kFloat32, DType::kInt32, big, xla).bits, 0x7fffffffu);
  EXPECT_EQ(vector_convert(DType::kFloat32, DType::kUInt16, bits_of(DType::kFloat32, -5), xla).bits,
            0u);
  EXPECT_EQ(vector_convert(DType::kFloat32, DType::kInt16, 0x7fc00000u, xla).bits, 0u);
  // int32 -> bfloat16: 2^24 + 2^16 + 1 rounds once to 2^24 + 2^17 on the hardware; XLA goes
  // through float32 (2^24 + 2^16, a tie) and lands on 2^24.
  const std::uint64_t n = (1u << 24) + (1u << 16) + 1;
  EXPECT_EQ(float_element_value(DType::kBFloat16,
                                vector_convert(DType::kInt32, DType::kBFloat16, n, hw).bits),
            0x1p24 + 0x1p17);
  EXPECT_EQ(float_element_value(DType::kBFloat16,
                                vector_convert(DType::kInt32, DType::kBFloat16, n, xla).bits),
            0x1p24);
  // A NaN and a subnormal float result are not compared.
  EXPECT_TRUE(vector_convert(DType::kFloat32, DType::kFloat16, 0x7fc00000u, hw).unspecified);
  EXPECT_TRUE(
      vector_convert(DType::kFloat32, DType::kFloat16, bits_of(DType::kFloat32, 0x1p-20), hw)
          .unspecified);
}

TEST(VectorConvert, TheReferenceAndTheSimulatorAgreeOnConvertedStores) {
  // (t32 + 1/4).astype(float16) + t16 over 256 elements: both registers have 2 lanes' worth.
  const json value = {
      {"add", {convert("float32", {{"add", {load("t32"), {{"const", 0.25}}}}}), load("t16")}}};
  const Outcome o = predicted_and_simulated(case_from_json(convert_case(value, "float16", 256)));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  // A round trip through bfloat16 and back, under Warpgroup, of 2048 elements.
  const json trip = convert("bfloat16", convert("float32", load("t32")));
  const Outcome w =
      predicted_and_simulated(case_from_json(convert_case(trip, "float32", 2048, "warpgroup")));
  ASSERT_EQ(w.kind, OutcomeKind::kCompleted);
}

TEST(VectorConvert, UnderLaneAnOpOnValuesOfTwoLayoutsIsRejected) {
  EXPECT_EQ(strided_vec_size(32, 512), 2);
  EXPECT_EQ(strided_vec_size(16, 512), 4);
  EXPECT_EQ(strided_vec_size(16, 384), 3);
  EXPECT_EQ(strided_vec_size(32, 384), 1);
  EXPECT_EQ(strided_vec_size(16, 256), 2);
  const json mixed = {{"add", {convert("float32", load("t32")), load("t16")}}};
  const Outcome lane = predicted_and_simulated(case_from_json(convert_case(mixed, "float16", 512)));
  ASSERT_EQ(lane.kind, OutcomeKind::kRejected);
  EXPECT_EQ(lane.diagnostic->rule, "lower.vector.incompatible_layouts");
  EXPECT_EQ(lane.diagnostic->message, "Incompatible FragmentedArray layouts");
  // 256 elements: both vec 2. Warpgroup: layout inference lowers it.
  EXPECT_EQ(predicted_and_simulated(case_from_json(convert_case(mixed, "float16", 256))).kind,
            OutcomeKind::kCompleted);
  EXPECT_EQ(
      predicted_and_simulated(case_from_json(convert_case(mixed, "float16", 512, "warpgroup")))
          .kind,
      OutcomeKind::kCompleted);
  // A constant is a splat: it takes any layout.
  const json with_const = {{"add", {convert("float32", load("t32")), {{"const", 1}}}}};
  EXPECT_EQ(predicted_and_simulated(case_from_json(convert_case(with_const, "float16", 512))).kind,
            OutcomeKind::kCompleted);
}

}  // namespace
}  // namespace collfuzz
