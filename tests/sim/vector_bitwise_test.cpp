// Bitwise vector values (docs/case-format.md, "vector_store"): {"and"|"or"|"xor": [a, b]}, JAX's
// a & b, a | b, a ^ b (lax.and_p/or_p/xor_p). Integer dtypes only (the parser names the field for
// a float); the bits of the dtype; and, unlike add/sub/mul/min/max, allowed on 8-bit integers by
// Mosaic GPU (FragmentedArray.__and__/__or__/__xor__ call _pointwise(restrict_bitwidth=False)),
// so that an 8-bit value is refused only for the arithmetic in it.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/vector_arith.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::c;
using simtest::predicted_and_simulated;
using simtest::tile;

json bitwise_case(const std::string& dtype, const json& value, const std::string& semantics,
                  std::int64_t start = 0) {
  return simtest::tile_store_case(dtype, value, semantics, start);
}

TEST(VectorBitwise, EachOpIsTheDtypesBits) {
  EXPECT_EQ(vector_binary(VectorKind::kAnd, DType::kInt32, 0xf0f0, 0x0ff0).bits, 0x00f0u);
  EXPECT_EQ(vector_binary(VectorKind::kOr, DType::kUInt16, 0xf000, 0x000f).bits, 0xf00fu);
  EXPECT_EQ(vector_binary(VectorKind::kXor, DType::kInt8, 0xff, 0x0f).bits, 0xf0u);
  // Masked to the width: no bit above it survives.
  EXPECT_EQ(vector_binary(VectorKind::kOr, DType::kUInt8, 0x1ff, 0).bits, 0xffu);
  EXPECT_FALSE(vector_binary(VectorKind::kXor, DType::kInt16, 1, 2).unspecified);
}

TEST(VectorBitwise, EightBitBitwiseLowersUnderBothSemantics) {
  // y = (tile ^ 5) | (tile & 3) over int8 from -128: every value by hand.
  const json value = {{"or", {{{"xor", {tile(), c(5)}}}, {{"and", {tile(), c(3)}}}}}};
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Case k = case_from_json(bitwise_case("int8", value, semantics, -128));
    const Outcome o = predicted_and_simulated(k);
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics;
    for (std::int64_t e = 0; e < 256; ++e) {
      const auto x = static_cast<std::int8_t>(e - 128);
      const auto want = static_cast<std::int8_t>((x ^ 5) | (x & 3));
      ASSERT_EQ(static_cast<std::int8_t>(o.outputs.at(0).bytes.at(static_cast<std::size_t>(e))),
                want)
          << semantics << " element " << e;
    }
  }
}

TEST(VectorBitwise, ArithmeticUnderABitwiseOpIsStillRefusedOnEightBits) {
  simtest::expect_refused_as_8bit_arithmetic("uint8", {{"xor", {{{"add", {tile(), c(1)}}}, c(7)}}});
}

TEST(VectorBitwise, Int32ValuesAgreeBetweenTheReferenceAndTheSimulator) {
  const json value = {{"and", {{{"or", {tile(), c(0x100)}}}, {{"xor", {tile(), c(-1)}}}}}};
  const Outcome o = predicted_and_simulated(case_from_json(bitwise_case("int32", value, "lane")));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  for (std::int64_t e : {0, 1, 200, 255}) {
    std::int32_t got = 0;
    std::memcpy(&got, o.outputs.at(0).bytes.data() + e * 4, 4);
    const auto x = static_cast<std::int32_t>(e);
    EXPECT_EQ(got, (x | 0x100) & ~x) << e;
  }
}

TEST(VectorBitwise, TheParserRefusesAFloatAndTheJsonFormRoundTrips) {
  try {
    case_from_json(bitwise_case("float32", {{"xor", {tile(), c(1)}}}, "lane"));
    ADD_FAILURE() << "a float xor parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("$.program[0].body[2].value.xor: a bitwise xor on "
                                         "float32"),
              std::string::npos)
        << e.what();
  }
  const json value = {{"or", {{{"and", {tile(), c(6)}}}, {{"xor", {tile(), c(2)}}}}}};
  const json written = case_to_json(case_from_json(bitwise_case("uint16", value, "lane")));
  EXPECT_EQ(written["program"][0]["body"][2]["value"], value);
}

}  // namespace
}  // namespace collfuzz
