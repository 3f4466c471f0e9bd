// The device tables a plan becomes: one program per warpgroup, the steps in program order with
// the plan's SMEM offsets, multicast masks and parities, tensor maps shared by equal boxes, a
// results layout with no overlaps, and undefined behaviour refused before it reaches a GPU.
#include "gpu/plan_encoder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/gpu/gpu_test_util.h"

namespace collfuzz::gpu {
namespace {

using gputest::encode_ok;
using gputest::make_case;
using gputest::multicast_case;

std::vector<std::uint8_t> kinds(const EncodedCase& e, std::size_t thread) {
  std::vector<std::uint8_t> out;
  const DevThread& t = e.threads.at(thread);
  for (std::uint32_t k = 0; k < t.num_steps; ++k) out.push_back(e.steps[t.first_step + k].kind);
  return out;
}

TEST(PlanEncoder, MulticastClusterOfFourOneProgramPerCta) {
  const EncodedCase e = encode_ok(multicast_case(4, 128, 64));
  EXPECT_EQ(e.num_ctas, 4u);
  EXPECT_EQ(e.shape.cluster[0], 4u);
  EXPECT_EQ(e.shape.threads_per_cta, 1u);
  ASSERT_EQ(e.threads.size(), 4u);
  ASSERT_EQ(e.mbars.size(), 1u);
  EXPECT_EQ(e.mbars[0].count, 128u);  // Lane: num_arrivals * 128
  const std::vector<std::uint8_t> expected{kOpScopeEnter, kOpArrive, kOpLoadTensor, kOpWait,
                                           kOpScopeExit};
  for (std::size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(kinds(e, r), expected) << "CTA " << r;
    const DevStep* s = &e.steps[e.threads[r].first_step];
    // Every lane arms D / 128 = 256 bytes.
    EXPECT_EQ(s[1].a, 128u);
    EXPECT_EQ(tx_lane0(s[1].c), 256u);
    EXPECT_EQ(tx_others(s[1].c), 256u);
    // CTA r loads rows 32r..32r+31 into the same rows of all four CTAs.
    EXPECT_EQ(s[2].flags & kFlagMulticast, kFlagMulticast);
    EXPECT_EQ(s[2].flags & kFlagPredicate, kFlagPredicate);
    EXPECT_EQ(tensor_rank(s[2].flags), 2);
    EXPECT_EQ(s[2].mask, 0xFu);
    EXPECT_EQ(s[2].b, r * 32 * 64 * 4);
    EXPECT_EQ(s[2].coords[0], 0);
    EXPECT_EQ(s[2].coords[1], static_cast<std::int32_t>(32 * r));
    EXPECT_EQ(s[2].mbar, e.mbars[0].smem_offset);
    EXPECT_EQ(s[3].a, 0u);  // parity of phase 0
    EXPECT_EQ(s[3].slot, r);
  }
  // One tensor map serves every CTA: only the coordinates differ.
  ASSERT_EQ(e.tensor_maps.size(), 1u);
  EXPECT_EQ(e.tensor_maps[0].params.box[1], 32u);
  EXPECT_EQ(e.tensor_maps[0].params.box[0], 64u);
  ASSERT_EQ(e.waits.size(), 4u);
  EXPECT_EQ(e.waits[2].cta, 2);
  EXPECT_EQ(e.waits[2].barrier, "bar[0]");
  EXPECT_EQ(e.waits[2].op, "$.program[0].body[1]");
}

TEST(PlanEncoder, ResultsRegionsDoNotOverlap) {
  const EncodedCase e = encode_ok(multicast_case(4, 128, 64));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> regions;
  regions.emplace_back(0, sizeof(DevCaseStatus));
  regions.emplace_back(e.control_offset, e.control_offset + e.control_stride * e.num_ctas);
  for (const BufferMeta& b : e.buffer_meta) {
    regions.emplace_back(b.result_offset, b.result_offset + b.bytes);
    regions.emplace_back(b.flag_offset, b.flag_offset + 4);
  }
  regions.emplace_back(e.waits_offset, e.waits_offset + e.waits.size() * sizeof(DevWaitResult));
  std::sort(regions.begin(), regions.end());
  for (std::size_t i = 1; i < regions.size(); ++i) {
    EXPECT_LE(regions[i - 1].second, regions[i].first) << "region " << i;
  }
  EXPECT_LE(regions.back().second, e.results_bytes);
  for (const BufferMeta& b : e.buffer_meta) EXPECT_EQ(b.result_offset % 16, 0u);
  EXPECT_EQ(e.buffer_meta.size(), 4u);
}

TEST(PlanEncoder, PlainCopyHasNoMask) {
  const EncodedCase e = encode_ok(multicast_case(2, 64, 64, "null"));
  const DevStep& load = e.steps[e.threads[1].first_step + 2];
  ASSERT_EQ(load.kind, kOpLoadTensor);
  EXPECT_EQ(load.flags & kFlagMulticast, 0);
  EXPECT_EQ(load.b, 0u);
}

TEST(PlanEncoder, BulkCopyOffsetsAreBytes) {
  const Case c =
      make_case("{}", gputest::kLane, R"([{"name": "x", "shape": [256, 64], "dtype": "float32"}])",
                R"([{"op": "run_scoped", "allocs": [
            {"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
            {"name": "bar", "kind": "barrier"}],
          "body": [
            {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"start": 64, "size": 64}]},
             "dst": {"alloc": "dst"}, "barrier": {"alloc": "bar"}, "oob_mode": "promise_in_bounds"},
            {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
  const EncodedCase e = encode_ok(c);
  const DevStep& load = e.steps[e.threads[0].first_step + 2];
  ASSERT_EQ(load.kind, kOpLoadBulk);
  EXPECT_EQ(load.a, 64u * 64 * 4);
  EXPECT_EQ(static_cast<std::int64_t>(load.c), 64 * 64 * 4);
  EXPECT_EQ(load.slot, 0u);
  EXPECT_TRUE(e.tensor_maps.empty());
}

TEST(PlanEncoder, ClusterBarrierArrivalsGoToEveryCtaOfTheMask) {
  const Case c =
      make_case(R"({"cluster": [2, 2], "cluster_names": ["a", "b"]})", gputest::kLane, "[]",
                R"([{"op": "run_scoped", "allocs": [
            {"name": "cb", "kind": "cluster_barrier", "collective_axes": ["a", "b"]}],
          "body": [
            {"op": "barrier_arrive", "barrier": {"alloc": "cb"}},
            {"op": "barrier_wait", "barrier": {"alloc": "cb"}}]}])");
  const EncodedCase e = encode_ok(c);
  ASSERT_EQ(e.mbars.size(), 1u);
  EXPECT_EQ(e.mbars[0].count, 3u);  // 1 * (2 + 2 - 2 + 1)
  for (std::size_t r = 0; r < 4; ++r) {
    const DevStep& arrive = e.steps[e.threads[r].first_step + 1];
    ASSERT_EQ(arrive.kind, kOpRemoteArrive);
    // The CTAs sharing a coordinate with r: itself and one neighbour along each axis.
    EXPECT_EQ(__builtin_popcount(arrive.mask), 3) << "CTA " << r;
    EXPECT_TRUE((arrive.mask >> r) & 1u);
  }
}

TEST(PlanEncoder, UndefinedBehaviourIsNotEncoded) {
  lowering::LoweringResult r = lowering::lower_case(multicast_case(2, 64, 64));
  ASSERT_FALSE(r.diagnostic);

  lowering::Plan zero_count = r.plan;
  zero_count.mbarriers[0].arrival_count = 0;
  EncodeResult e = encode_plan(zero_count);
  EXPECT_FALSE(e.encoded);
  EXPECT_NE(e.unavailable.find("arrival count of 0"), std::string::npos) << e.unavailable;

  lowering::Plan big_tx = r.plan;
  for (auto& a : big_tx.arrives) a.tx_lane0 = std::int64_t{1} << 20;
  e = encode_plan(big_tx);
  EXPECT_FALSE(e.encoded);
  EXPECT_NE(e.unavailable.find("2^20 - 1"), std::string::npos) << e.unavailable;

  lowering::Plan outside = r.plan;
  for (auto& l : outside.loads) l.multicast_mask = 0b100;
  e = encode_plan(outside);
  EXPECT_FALSE(e.encoded);
  EXPECT_NE(e.unavailable.find("ctaMask 4"), std::string::npos) << e.unavailable;

  lowering::Plan misaligned_bulk = r.plan;
  for (auto& l : misaligned_bulk.loads) {
    l.path = lowering::LoadPath::kBulk;
    l.multicast_mask = 0;
    l.linear_offset = 1;
  }
  e = encode_plan(misaligned_bulk);
  EXPECT_FALSE(e.encoded);
  EXPECT_NE(e.unavailable.find("multiples of 16"), std::string::npos) << e.unavailable;
}

TEST(PlanEncoder, ATensorMapMosaicsRuntimeRefusesIsALaunchAbort) {
  lowering::LoweringResult r = lowering::lower_case(multicast_case(2, 64, 64));
  ASSERT_FALSE(r.diagnostic);
  for (auto& l : r.plan.loads) l.tensor.strides[l.tensor.rank - 1] = 2;
  const EncodeResult e = encode_plan(r.plan);
  ASSERT_TRUE(e.rejected);
  EXPECT_EQ(e.rejected->stage, "launch");
  EXPECT_EQ(e.rejected->exception, "abort");
  EXPECT_EQ(e.rejected->message, "Minormost stride must be 1, but got 2");
}

TEST(PlanEncoder, TwoThreadsBlockSyncsAreRecordedWaits) {
  const Case c = make_case(R"({"num_threads": 2, "thread_name": "wg"})", gputest::kLane,
                           R"([{"name": "x", "shape": [64, 64], "dtype": "float32"}])",
                           R"([{"op": "run_scoped", "collective_axes": "wg", "allocs": [
            {"name": "dst", "kind": "smem", "shape": [64, 64], "dtype": "float32"},
            {"name": "bar", "kind": "barrier", "num_arrivals": 2}],
          "body": [
            {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
             "barrier": {"alloc": "bar"}},
            {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])");
  const EncodedCase e = encode_ok(c);
  EXPECT_EQ(e.shape.threads_per_cta, 2u);
  ASSERT_EQ(e.threads.size(), 2u);
  int syncs = 0;
  for (const WaitMeta& w : e.waits) syncs += w.barrier == "block_sync" ? 1 : 0;
  EXPECT_EQ(syncs, 2);  // one per warpgroup at the run_scoped entry
  EXPECT_EQ(e.num_scopes, 1u);
  EXPECT_EQ(e.scopes.size(), 1u);
}

}  // namespace
}  // namespace collfuzz::gpu
