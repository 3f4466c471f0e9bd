// The reducing store (`copy_smem_to_gmem(..., reduction_op=...)`): the element arithmetic of each
// op (harness/core/reduction.h) on values worked out by hand from the PTX ISA's definitions, the
// float rounding, and the case format's reduction_op field (read, refused, written back).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/reduction.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

std::uint64_t u32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
std::uint64_t f32(float v) {
  std::uint32_t b = 0;
  std::memcpy(&b, &v, 4);
  return b;
}

TEST(Reduction, IntegerOpsFollowPtx) {
  const DType i32 = DType::kInt32;
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, i32, u32(-5), u32(3)), u32(-2));
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, i32, u32(0x7fffffff), u32(1)), u32(INT32_MIN));
  // -1 is 0xffffffff: the largest unsigned, the smallest-but-one signed.
  EXPECT_EQ(apply_reduction(ReductionOp::kUmax, i32, u32(-1), u32(7)), u32(-1));
  EXPECT_EQ(apply_reduction(ReductionOp::kSmax, i32, u32(-1), u32(7)), u32(7));
  EXPECT_EQ(apply_reduction(ReductionOp::kUmin, i32, u32(-1), u32(7)), u32(7));
  EXPECT_EQ(apply_reduction(ReductionOp::kSmin, i32, u32(-1), u32(7)), u32(-1));
  // inc: old >= src ? 0 : old + 1; dec: (old == 0 || old > src) ? src : old - 1 (unsigned).
  EXPECT_EQ(apply_reduction(ReductionOp::kInc, i32, 4, 9), 5u);
  EXPECT_EQ(apply_reduction(ReductionOp::kInc, i32, 9, 9), 0u);
  EXPECT_EQ(apply_reduction(ReductionOp::kInc, i32, u32(-3), 9), 0u);
  EXPECT_EQ(apply_reduction(ReductionOp::kDec, i32, 4, 9), 3u);
  EXPECT_EQ(apply_reduction(ReductionOp::kDec, i32, 0, 9), 9u);
  EXPECT_EQ(apply_reduction(ReductionOp::kDec, i32, 12, 9), 9u);
  EXPECT_EQ(apply_reduction(ReductionOp::kAnd, i32, 0b1100, 0b1010), 0b1000u);
  EXPECT_EQ(apply_reduction(ReductionOp::kOr, i32, 0b1100, 0b1010), 0b1110u);
  EXPECT_EQ(apply_reduction(ReductionOp::kXor, i32, 0b1100, 0b1010), 0b0110u);
  // 64-bit: add wraps modulo 2^64, smax compares signed.
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kInt64, ~std::uint64_t{0}, 2), 1u);
  EXPECT_EQ(apply_reduction(ReductionOp::kSmax, DType::kInt64, ~std::uint64_t{0}, 2), 2u);
}

TEST(Reduction, FloatOpsRoundToNearestEven) {
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kFloat32, f32(1.5f), f32(2.25f)), f32(3.75f));
  // 2^24 + 1 is not a float32: the tie rounds to the even 2^24.
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kFloat32, f32(16777216.f), f32(1.f)),
            f32(16777216.f));
  // bfloat16 holds 8 significant bits: 256 + 1 rounds to 256 (even), 256 + 3 to 260.
  const std::uint64_t b256 = 0x4380;  // bf16 256.0
  const std::uint64_t b1 = 0x3f80;    // bf16 1.0
  const std::uint64_t b3 = 0x4040;    // bf16 3.0
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kBFloat16, b256, b1), b256);
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kBFloat16, b256, b3), 0x4382u);  // 260
  // float16: 65504 + 65504 overflows to +inf (0x7c00).
  EXPECT_EQ(apply_reduction(ReductionOp::kAdd, DType::kFloat16, 0x7bff, 0x7bff), 0x7c00u);
  // min/max on float16: -2 (0xc000) against 1 (0x3c00).
  EXPECT_EQ(apply_reduction(ReductionOp::kMin, DType::kFloat16, 0xc000, 0x3c00), 0xc000u);
  EXPECT_EQ(apply_reduction(ReductionOp::kMax, DType::kFloat16, 0xc000, 0x3c00), 0x3c00u);
  // A NaN operand yields the other.
  EXPECT_EQ(apply_reduction(ReductionOp::kMax, DType::kFloat16, 0x7e00, 0x3c00), 0x3c00u);
}

TEST(Reduction, RoundingToSubnormalsAndZero) {
  // float16's smallest subnormal is 2^-24: 2^-25 ties to even (0), 3 * 2^-26 rounds up to 2^-24.
  EXPECT_EQ(round_to_float_bits(DType::kFloat16, std::ldexp(1.0, -25)), 0u);
  EXPECT_EQ(round_to_float_bits(DType::kFloat16, 3 * std::ldexp(1.0, -26)), 1u);
  EXPECT_EQ(round_to_float_bits(DType::kFloat16, -0.0), 0x8000u);
}

std::string store_case(const std::string& extra) {
  return R"({"format": 1, "name": "t", "mesh": {}, "target": {"arch": "sm_90a"}, "inputs": [],
    "outputs": [{"name": "y", "shape": [128], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [{"name": "buf", "kind": "smem", "shape": [128], "dtype": "float32"}],
      "body": [{"op": "copy_smem_to_gmem", "src": {"alloc": "buf"}, "dst": {"output": "y"})" +
         extra + "}]}]}";
}

TEST(ReductionCaseFormat, ReadsAndWritesTheOp) {
  const Case c = case_from_json(nlohmann::json::parse(store_case(R"(, "reduction_op": "umax")")));
  const auto& rs = std::get<RunScoped>(c.program.at(0).v);
  const auto& st = std::get<CopySmemToGmem>(rs.body.at(0).v);
  ASSERT_TRUE(st.reduction_op.has_value());
  EXPECT_EQ(*st.reduction_op, ReductionOp::kUmax);
  const nlohmann::json back = case_to_json(c);
  EXPECT_EQ(back["program"][0]["body"][0]["reduction_op"], "umax");
  // Absent (or null) is a plain store, written without the field.
  const Case plain = case_from_json(nlohmann::json::parse(store_case(R"(, "reduction_op": null)")));
  EXPECT_FALSE(case_to_json(plain)["program"][0]["body"][0].contains("reduction_op"));
}

TEST(ReductionCaseFormat, AnUnknownOpNamesTheField) {
  try {
    (void)case_from_json(nlohmann::json::parse(store_case(R"(, "reduction_op": "mul")")));
    FAIL() << "accepted reduction_op \"mul\"";
  } catch (const InputError& e) {
    EXPECT_EQ(e.path(), "$.program[0].body[0].reduction_op");
  }
}

}  // namespace
}  // namespace collfuzz
