// One launch's image: cases concatenated with their record bases, results placed apart and
// aligned, tensor maps 128-byte aligned, and a case of another launch shape refused.
#include "gpu/batch_image.h"

#include <gtest/gtest.h>

#include "tests/gpu/gpu_test_util.h"

namespace collfuzz::gpu {
namespace {

using gputest::encode_ok;
using gputest::multicast_case;

TEST(BatchImage, CasesKeepTheirRecordsBehindTheirBases) {
  const EncodedCase a = encode_ok(multicast_case(2, 64, 64));
  const EncodedCase b = encode_ok(multicast_case(2, 128, 64, "null"));
  BatchImage image(a.shape);
  image.add(a, {4096}, std::vector<TensorMapBytes>(a.tensor_maps.size()));
  image.add(b, {8192}, std::vector<TensorMapBytes>(b.tensor_maps.size()));
  image.finish();
  ASSERT_EQ(image.num_cases(), 2u);
  const auto& bytes = image.bytes();
  const DevTables& t = image.layout();
  const DevCase* cases = table<DevCase>(bytes, t.cases);
  EXPECT_EQ(cases[0].step_base, 0u);
  EXPECT_EQ(cases[1].step_base, a.steps.size());
  EXPECT_EQ(cases[1].thread_base, a.threads.size());
  EXPECT_EQ(cases[1].mbar_base, a.mbars.size());
  EXPECT_EQ(cases[1].tmap_base, a.tensor_maps.size());
  EXPECT_EQ(cases[1].input_base, 1u);
  EXPECT_EQ(table<std::uint64_t>(bytes, t.input_offsets)[1], 8192u);
  // The second case's first step is its own.
  const DevStep* steps = table<DevStep>(bytes, t.steps);
  EXPECT_EQ(steps[cases[1].step_base].kind, b.steps[0].kind);
  // Results: 256-byte aligned, apart.
  EXPECT_EQ(image.results_base(0), 0u);
  EXPECT_GE(image.results_base(1), a.results_bytes);
  EXPECT_EQ(image.results_base(1) % 256, 0u);
  EXPECT_GE(image.results_bytes(), image.results_base(1) + b.results_bytes);
  EXPECT_EQ(t.tmaps % 128, 0u);
  EXPECT_EQ(t.bytes % 256, 0u);
  EXPECT_EQ(image.smem_bytes(), std::max(a.smem_bytes, b.smem_bytes));
}

TEST(BatchImage, RefusesAnotherLaunchShape) {
  const EncodedCase two = encode_ok(multicast_case(2, 64, 64));
  const EncodedCase four = encode_ok(multicast_case(4, 64, 64));
  BatchImage image(two.shape);
  EXPECT_THROW(image.add(four, {0}, std::vector<TensorMapBytes>(four.tensor_maps.size())),
               std::invalid_argument);
  EXPECT_THROW(image.add(two, {}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace collfuzz::gpu
