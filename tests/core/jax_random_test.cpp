// The `jax_random` fill (docs/case-format.md "Fills"): threefry2x32 on Random123's known answers
// (the vectors JAX's own random_test.py checks), the elements JAX 0.11.2 and 0.12.0.1 return for
// jax.random.uniform / jax.random.bits of split keys (printed by both releases, identical), the
// case reader's refusals (each naming its field) and the writer's round trip.
#include <gtest/gtest.h>

#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "harness/core/jax_random.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;

TEST(Threefry2x32, KnownAnswers) {
  EXPECT_EQ(threefry2x32({0, 0}, 0, 0), (std::array<std::uint32_t, 2>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(threefry2x32({0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (std::array<std::uint32_t, 2>{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(threefry2x32({0x13198a2e, 0x03707344}, 0x243f6a88, 0x85a308d3),
            (std::array<std::uint32_t, 2>{0xc4923a9c, 0x483df7a0}));
}

TEST(JaxRandom, SplitKeyIsJaxs) {
  // jax.random.key_data(jax.random.split(jax.random.key(0), 2)[0]) == [1797259609, 2579123966]
  EXPECT_EQ(jax_random_key(0, {{2, 0}}), (ThreefryKey{1797259609u, 2579123966u}));
}

ArraySpec drawn(DType d, std::uint64_t seed,
                std::vector<std::pair<std::uint32_t, std::uint32_t>> split) {
  ArraySpec a;
  a.name = "x";
  a.shape = {8};
  a.dtype = d;
  a.fill.pattern = FillPattern::kJaxRandom;
  a.fill.seed = seed;
  a.fill.split = std::move(split);
  return a;
}

TEST(JaxRandom, ElementsAreWhatJaxDraws) {
  struct Want {
    DType dtype;
    std::uint64_t seed;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> split;
    std::vector<std::uint64_t> bits;  // the first elements' bit patterns, from JAX
  };
  const Want wants[] = {
      {DType::kFloat32, 0, {}, {0x3f729a4e, 0x3f7a8436, 0x3eaa221c, 0x3eeff550}},
      {DType::kFloat32, 0, {{2, 0}}, {0x3f57a1e6, 0x3e3ac178, 0x3e68a160}},
      {DType::kFloat16, 0, {{2, 1}}, {0x2280, 0x3028, 0x35fc}},
      {DType::kBFloat16, 42, {{3, 2}, {2, 1}}, {0x3e40, 0x3eb8, 0x3ed4, 0x3f30, 0x3e98, 0x3ee4}},
      {DType::kUInt32, 7, {}, {0xac91290b, 0xf9807e00, 0x4d8729aa}},
      {DType::kUInt16, 7, {{4, 3}}, {0xb794, 0xba83, 0xa765}},
      {DType::kUInt8, 1234, {}, {0x6b, 0xe9, 0x9c, 0x85, 0x15}},
  };
  for (const Want& w : wants) {
    const ArraySpec a = drawn(w.dtype, w.seed, w.split);
    const auto bytes = fill_bytes(a);
    for (std::size_t i = 0; i < w.bits.size(); ++i) {
      EXPECT_EQ(fill_element_bits(a, static_cast<std::int64_t>(i)), w.bits[i])
          << dtype_name(w.dtype) << " element " << i;
      EXPECT_EQ(load_element(bytes, a.dtype, static_cast<std::int64_t>(i)), w.bits[i]);
    }
  }
  // the split's n does not change the key (JAX's partitionable split)
  EXPECT_EQ(fill_bytes(drawn(DType::kFloat32, 5, {{2, 1}})),
            fill_bytes(drawn(DType::kFloat32, 5, {{7, 1}})));
  EXPECT_NE(fill_bytes(drawn(DType::kFloat32, 5, {{2, 1}})),
            fill_bytes(drawn(DType::kFloat32, 5, {{2, 0}})));
}

json case_with_fill(const std::string& dtype, json fill) {
  json j = testing::minimal_case_json();
  j["inputs"][0]["dtype"] = dtype;
  j["inputs"][0]["shape"] = {2, 64};
  j["inputs"][0]["fill"] = std::move(fill);
  j["program"][0]["allocs"][0]["dtype"] = dtype;
  j["program"][0]["allocs"][0]["shape"] = j["inputs"][0]["shape"];
  return j;
}

TEST(JaxRandomJson, ParsesAndRoundTrips) {
  const json fill = {
      {"pattern", "jax_random"}, {"distribution", "uniform"}, {"seed", 0}, {"split", {{2, 0}}}};
  const Case c = testing::parse(case_with_fill("float32", fill));
  EXPECT_EQ(c.inputs[0].fill.pattern, FillPattern::kJaxRandom);
  EXPECT_EQ(fill_element_bits(c.inputs[0], 1), 0x3e3ac178u);
  EXPECT_EQ(case_to_json(c)["inputs"][0]["fill"], fill);
  EXPECT_TRUE(testing::parse(case_to_json(c)).inputs[0].fill == c.inputs[0].fill);
  // no split: written without one
  const json bits = {{"pattern", "jax_random"}, {"distribution", "bits"}, {"seed", 7}};
  EXPECT_EQ(case_to_json(testing::parse(case_with_fill("uint16", bits)))["inputs"][0]["fill"],
            bits);
}

TEST(JaxRandomJson, BadFillsNameTheirField) {
  const std::string f = "$.inputs[0].fill";
  const auto with = [](json extra) {
    json fill = {{"pattern", "jax_random"}, {"distribution", "uniform"}};
    for (auto& [k, v] : extra.items()) fill[k] = v;
    return fill;
  };
  EXPECT_EQ(testing::error_path_of(case_with_fill("int32", with({{"distribution", "bits"}}))),
            f + ".pattern");  // jax.random.bits draws unsigned dtypes only
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", {{"pattern", "jax_random"}})),
            f + ".distribution");
  EXPECT_EQ(testing::error_path_of(case_with_fill("uint8", with({}))), f + ".distribution");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"distribution", "normal"}}))),
            f + ".distribution");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"seed", -1}}))), f + ".seed");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"seed", 1ll << 31}}))),
            f + ".seed");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"split", {{2, 2}}}}))),
            f + ".split[0][1]");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"split", {{0, 0}}}}))),
            f + ".split[0][0]");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"split", {{2}}}}))),
            f + ".split[0]");
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"split", 3}}))), f + ".split");
  json deep = json::array();
  for (int i = 0; i < 17; ++i) deep.push_back({2, 0});
  EXPECT_EQ(testing::error_path_of(case_with_fill("float32", with({{"split", deep}}))),
            f + ".split");
  EXPECT_EQ(
      testing::error_path_of(case_with_fill("float32", {{"pattern", "iota"}, {"split", {{2, 0}}}})),
      f + ".split");
}

}  // namespace
}  // namespace collfuzz
