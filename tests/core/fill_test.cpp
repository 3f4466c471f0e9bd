// Fills are deterministic, exact in every dtype, and packed as documented.
#include <gtest/gtest.h>

#include "harness/core/fill.h"

namespace collfuzz {
namespace {

ArraySpec array(DType d, Shape s, FillPattern p = FillPattern::kIota, std::uint64_t seed = 0) {
  ArraySpec a;
  a.name = "x";
  a.shape = std::move(s);
  a.dtype = d;
  a.fill.pattern = p;
  a.fill.seed = seed;
  return a;
}

TEST(Fill, IotaStartsAtOneAndSkipsZero) {
  const ArraySpec a = array(DType::kInt32, {4});
  EXPECT_EQ(fill_element_bits(a, 0), 1u);
  EXPECT_EQ(fill_element_bits(a, 3), 4u);
  const ArraySpec f = array(DType::kFloat32, {4});
  EXPECT_EQ(fill_element_bits(f, 0), 0x3F800000u);  // 1.0f
  EXPECT_EQ(fill_element_bits(f, 1), 0x40000000u);  // 2.0f
}

TEST(Fill, SmallFloatsAreExact) {
  const ArraySpec h = array(DType::kFloat16, {4});
  EXPECT_EQ(fill_element_bits(h, 0), 0x3C00u);  // 1.0 in half
  EXPECT_EQ(fill_element_bits(h, 2), 0x4200u);  // 3.0
  const ArraySpec b = array(DType::kBFloat16, {4});
  EXPECT_EQ(fill_element_bits(b, 1), 0x4000u);  // 2.0 in bfloat16
  const ArraySpec e4 = array(DType::kFloat8E4M3FN, {4});
  EXPECT_EQ(fill_element_bits(e4, 0), 0x38u);  // 1.0 in e4m3fn
  const ArraySpec e5 = array(DType::kFloat8E5M2, {4});
  EXPECT_EQ(fill_element_bits(e5, 0), 0x3Cu);  // 1.0 in e5m2
}

TEST(Fill, Int4PacksLowNibbleFirst) {
  const ArraySpec a = array(DType::kInt4, {3});
  const auto bytes = fill_bytes(a);
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 0x21);  // elements 1 and 2
  EXPECT_EQ(bytes[1], 0x03);
  EXPECT_EQ(load_element(bytes, DType::kInt4, 2), 3u);
}

TEST(Fill, IotaWrapsWithinTheRange) {
  const ArraySpec a = array(DType::kInt4, {20});
  // 1..7, then -8..-1 (0 skipped), then 1...
  EXPECT_EQ(fill_element_bits(a, 6), 7u);
  EXPECT_EQ(fill_element_bits(a, 7), 0x8u);   // -8
  EXPECT_EQ(fill_element_bits(a, 14), 0xFu);  // -1
  EXPECT_EQ(fill_element_bits(a, 15), 1u);    // 0 became 1
}

TEST(Fill, RandomIsSeededAndReproducible) {
  const ArraySpec a = array(DType::kInt32, {1000}, FillPattern::kRandom, 7);
  const ArraySpec b = array(DType::kInt32, {1000}, FillPattern::kRandom, 7);
  const ArraySpec c = array(DType::kInt32, {1000}, FillPattern::kRandom, 8);
  EXPECT_EQ(fill_bytes(a), fill_bytes(b));
  EXPECT_NE(fill_bytes(a), fill_bytes(c));
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
}

}  // namespace
}  // namespace collfuzz

namespace collfuzz {
namespace {

// fill_bytes (incremental) and fill_element_bits (closed form) agree for every dtype and pattern.
TEST(Fill, BulkAndPerElementAgree) {
  for (const auto& info : all_dtypes()) {
    for (auto pattern : {FillPattern::kIota, FillPattern::kRandom, FillPattern::kConstant,
                         FillPattern::kArange, FillPattern::kValues}) {
      ArraySpec a;
      a.shape = {70000};
      a.dtype = info.dtype;
      a.fill.pattern = pattern;
      a.fill.seed = 3;
      a.fill.value = -5;
      a.fill.start = fill_value_range(info.dtype).first;  // the whole range, then past it
      a.fill.step = 0;
      if (pattern == FillPattern::kValues) {
        std::vector<std::uint64_t> v(70000);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = splitmix64(i);
        a.fill.values = std::make_shared<const std::vector<std::uint64_t>>(std::move(v));
      }
      const auto bytes = fill_bytes(a);
      for (std::int64_t i = 0; i < 70000; i += 97) {
        ASSERT_EQ(load_element(bytes, a.dtype, i), fill_element_bits(a, i))
            << info.name << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace collfuzz
