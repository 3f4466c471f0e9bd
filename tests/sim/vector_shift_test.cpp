// Shifts in vector values (docs/case-format.md, "vector_store"): {"shift_left"|
// "shift_right_logical"|"shift_right_arithmetic": [a, b]}, JAX's lax.shift_left,
// lax.shift_right_logical, lax.shift_right_arithmetic (`a << b`, `a >> b`). Integer dtypes only;
// the amount any value of the dtype, element by element, a constant one below the width (the
// parser names the field otherwise). Past the width LLVM's shift is poison (unspecified for the
// compiler) while XLA's shifts every bit out (interpret mode). Mosaic GPU lowers them through
// FragmentedArray._pointwise with restrict_bitwidth left True, so an 8-bit shift is refused as
// arithmetic is (lower.vector.pointwise_8bit).
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
using simtest::op;
using simtest::predicted_and_simulated;
using simtest::tile;
using simtest::tile_store_case;

TEST(VectorShift, EachShiftIsTheDtypesBits) {
  // By hand: 0xc001 as int16 is -16383.
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 0xc001, 2).bits, 0x0004u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightLogical, DType::kInt16, 0xc001, 2).bits, 0x3000u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kInt16, 0xc001, 2).bits,
            0xf000u);
  // Arithmetic on an unsigned dtype copies the top bit all the same (lax's rule is the bits').
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kUInt32, 0x80000000u, 4).bits,
            0xf8000000u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kUInt32, 0x40000000u, 4).bits,
            0x04000000u);
  // A shift by 0 is the value; by width - 1 the top or bottom bit alone.
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kUInt16, 0x1234, 0).bits, 0x1234u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kInt32, 3, 31).bits, 0x80000000u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kInt32, 0x80000000u, 31).bits,
            0xffffffffu);
  EXPECT_FALSE(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 1, 2).unspecified);
}

TEST(VectorShift, PastTheWidthXlaShiftsEveryBitOutAndTheHardwareIsUnspecified) {
  const auto hw = ComputedBy::kHardware;
  const auto xla = ComputedBy::kXlaCpu;
  // By 16 on int16: XLA gives 0 (left, logical) or the sign everywhere (arithmetic).
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 0x1234, 16, xla).bits, 0u);
  EXPECT_FALSE(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 0x1234, 16, xla).unspecified);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightLogical, DType::kInt16, 0x8000, 40, xla).bits, 0u);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kInt16, 0x8000, 16, xla).bits,
            0xffffu);
  EXPECT_EQ(vector_binary(VectorKind::kShiftRightArithmetic, DType::kInt16, 0x4000, 16, xla).bits,
            0u);
  // A negative amount is an unsigned one past the width: -1 as int16 is 65535.
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 1, 0xffff, xla).bits, 0u);
  // On the hardware LLVM's shl/lshr/ashr past the width is poison.
  EXPECT_TRUE(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 0x1234, 16, hw).unspecified);
  EXPECT_TRUE(
      vector_binary(VectorKind::kShiftRightArithmetic, DType::kUInt32, 1, 32, hw).unspecified);
  EXPECT_TRUE(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 1, 0xffff, hw).unspecified);
  EXPECT_FALSE(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 1, 15, hw).unspecified);
  EXPECT_EQ(vector_binary(VectorKind::kShiftLeft, DType::kInt16, 1, 15, hw).bits, 0x8000u);
}

TEST(VectorShift, AnAmountLoadedFromTheTileShiftsEachElementByItsOwn) {
  // y = x >> (x & 7) over int16 from -128, under Lane and Warpgroup: each element moved down by
  // its own low three bits, copying the sign, every element by hand.
  const json value = op("shift_right_arithmetic", tile(), op("and", tile(), c(7)));
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Outcome o =
        predicted_and_simulated(case_from_json(tile_store_case("int16", value, semantics, -128)));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics;
    ASSERT_EQ(o.outputs.at(0).written,
              (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
    for (std::int64_t e = 0; e < 256; ++e) {
      const auto x = static_cast<std::int16_t>(e - 128);
      const auto want = static_cast<std::uint16_t>(static_cast<std::int16_t>(x >> (x & 7)));
      std::uint16_t got = 0;
      std::memcpy(&got, o.outputs.at(0).bytes.data() + e * 2, 2);
      ASSERT_EQ(got, want) << semantics << " element " << e;
    }
  }
}

TEST(VectorShift, AnAmountPastTheWidthIsUnspecifiedForTheCompilerAndXlasForInterpretMode) {
  // y = x << x over int32 arange(256): element e shifted left by e. Below 32 it is e << e; from
  // 32 on the compiler's is poison (not written: not compared) and interpret mode's XLA's, 0.
  const Case k = case_from_json(tile_store_case("int32", op("shift_left", tile(), tile()), "lane"));
  const Outcome compiled = predicted_and_simulated(k);
  ASSERT_EQ(compiled.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(compiled.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 32}}));
  const Outcome interpreted = predict(k, Profile::kInterpret).outcome;
  ASSERT_EQ(interpreted.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(interpreted.outputs.at(0).written,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 256}}));
  for (std::int64_t e = 0; e < 256; ++e) {
    const std::uint32_t want = e < 32 ? static_cast<std::uint32_t>(e) << e : 0u;
    std::uint32_t got = 0;
    std::memcpy(&got, interpreted.outputs.at(0).bytes.data() + e * 4, 4);
    ASSERT_EQ(got, want) << "element " << e;
    if (e < 32) {
      std::memcpy(&got, compiled.outputs.at(0).bytes.data() + e * 4, 4);
      ASSERT_EQ(got, want) << "compiled element " << e;
    }
  }
}

TEST(VectorShift, Int16ValuesAgreeUnderBothSemantics) {
  // y = shift_right_arithmetic(x << 9, 9) ^ shift_right_logical(x, 3) over int16 from -128:
  // the low 7 bits of x sign-extended, xor x's bits moved down by 3, every element by hand.
  const json value = op("xor", op("shift_right_arithmetic", op("shift_left", tile(), c(9)), c(9)),
                        op("shift_right_logical", tile(), c(3)));
  for (const char* semantics : {"lane", "warpgroup"}) {
    const Outcome o =
        predicted_and_simulated(case_from_json(tile_store_case("int16", value, semantics, -128)));
    ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << semantics;
    for (std::int64_t e = 0; e < 256; ++e) {
      const auto x = static_cast<std::uint16_t>(static_cast<std::int16_t>(e - 128));
      const auto low7 = static_cast<std::uint16_t>(x & 0x7f);
      const auto sext = static_cast<std::uint16_t>((low7 & 0x40) ? (low7 | 0xff80) : low7);
      const auto want = static_cast<std::uint16_t>(sext ^ (x >> 3));
      std::uint16_t got = 0;
      std::memcpy(&got, o.outputs.at(0).bytes.data() + e * 2, 2);
      ASSERT_EQ(got, want) << semantics << " element " << e;
    }
  }
}

TEST(VectorShift, AnEightBitShiftIsRefusedAsArithmetic) {
  simtest::expect_refused_as_8bit_arithmetic("uint8", op("shift_left", tile(), c(1)));
}

void expect_refused(const json& value, const std::string& dtype, const std::string& field,
                    const std::string& words) {
  simtest::expect_parse_refused(tile_store_case(dtype, value, "lane"), field, words);
}

TEST(VectorShift, TheParserKeepsAConstantAmountBelowTheWidth) {
  const std::string at = "$.program[0].body[2].value.shift_left";
  expect_refused(op("shift_left", tile(), c(16)), "int16", at + "[1].const",
                 "a constant amount is 0 to 15");
  expect_refused(op("shift_left", tile(), c(-1)), "int32", at + "[1].const",
                 "a constant amount is 0 to 31");
  expect_refused(op("shift_left", tile(), c(1)), "float32", at, "lax's shifts take integers");
  // A computed amount is any value of the dtype, and round-trips.
  for (const json& value : {op("shift_right_logical", op("shift_left", tile(), c(3)), c(1)),
                            op("shift_left", tile(), op("and", tile(), c(31))),
                            op("shift_right_arithmetic", c(64), tile())}) {
    const json written = case_to_json(case_from_json(tile_store_case("uint32", value, "lane")));
    EXPECT_EQ(written["program"][0]["body"][2]["value"], value);
  }
}

}  // namespace
}  // namespace collfuzz
