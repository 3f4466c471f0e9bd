// The device tables mean what the plan means: every corpus case that the simulator runs is run
// again from its encoded tables on the CPU emulator of the interpreter kernel, and the two
// outcomes must agree on all three oracles (a predicted deadlock is a timed-out wait). This is
// the CPU half of the GPU differential check; ci/gpu-differential runs the other half.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/fill.h"
#include "harness/executors/executor.h"
#include "oracles/oracles.h"
#include "tests/gpu/gpu_test_util.h"

namespace collfuzz {
namespace {

std::string first_mismatch(const Verdict& v) {
  return v.mismatches.empty() ? ""
                              : v.mismatches.front().signature + ": " + v.mismatches.front().detail;
}

TEST(EmulatorAgreement, CorpusCasesAgreeWithTheSimulator) {
  auto sim = make_executor("sim", ExecutorOptions{});
  int compared = 0;
  int timeouts = 0;
  for (const auto& file : gputest::corpus_files()) {
    const Case c = load_case_file(file);
    if (c.target.arch == Arch::kSm80) continue;  // the cp.async path never runs on the GPU
    const Outcome expected = sim->run(c);
    const Outcome actual = gputest::run_emulated({c}, c.target.arch).front();
    if (expected.kind == OutcomeKind::kRejected && expected.diagnostic->stage == "launch") {
      // Launch-stage predictions are tried on the device (here: the emulator's probe).
      ASSERT_EQ(actual.kind, OutcomeKind::kRejected) << file << ": " << actual.reason;
      EXPECT_EQ(actual.diagnostic->message, expected.diagnostic->message) << file;
      continue;
    }
    if (!expected.accepted()) {
      EXPECT_NE(actual.kind, OutcomeKind::kCompleted) << file;
      continue;
    }
    // The one plan the device cannot hold: a buffer the layout gives no bytes (int4[1]); and
    // plans that over-arrive on a barrier (JAX 0.11.2's 128-lane orders_tensor_core arrivals),
    // undefined behaviour on hardware, which the executor declines to run; and reducing stores
    // (reduction_op), stores left in flight (store groups), cluster launch control (sm_100) and
    // vector stores, which its device
    // interpreter does not have; nor swizzled or tiled SMEM (it reads SMEM row-major), nor a store
    // from a transposed SMEM ref (it reads SMEM in the output slice's order).
    if (actual.kind == OutcomeKind::kUnavailable &&
        (actual.reason.find("fewer bytes than it holds") != std::string::npos ||
         actual.reason.find("undefined behaviour on hardware") != std::string::npos ||
         actual.reason.find("reduction_op") != std::string::npos ||
         actual.reason.find("a store left in flight") != std::string::npos ||
         actual.reason.find("a vector_store") != std::string::npos ||
         actual.reason.find("try_cluster_cancel") != std::string::npos ||
         actual.reason.find("swizzle") != std::string::npos ||
         actual.reason.find("a store from a transposed SMEM ref") != std::string::npos)) {
      continue;
    }
    ASSERT_TRUE(actual.accepted())
        << file << ": " << to_string(actual.kind) << ": " << actual.reason;
    const Verdict v = compare(c, expected, actual);
    EXPECT_TRUE(v.mismatches.empty()) << file << ": " << first_mismatch(v);
    EXPECT_GT(v.compared, 0) << file;
    ++compared;
    timeouts += actual.kind == OutcomeKind::kTimeout ? 1 : 0;
  }
  EXPECT_GE(compared, 25);
  EXPECT_GE(timeouts, 2);  // the corpus's predicted deadlocks
}

TEST(EmulatorAgreement, APlantedExpectTxMismatchIsATimeout) {
  // Every CTA arms 2D bytes and receives D (spec 3.5, leader_tracked on a size-1 axis).
  const Case c = gputest::corpus_case("deadlock.leader_tracked__size1_axis");
  const Outcome o = gputest::run_emulated({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kTimeout) << o.reason;
  EXPECT_NE(o.reason.find("did not complete within 100 ms"), std::string::npos) << o.reason;
  ASSERT_EQ(o.ctas.size(), 2u);
  for (const CtaRecord& cta : o.ctas) {
    ASSERT_EQ(cta.waits.size(), 1u);
    EXPECT_FALSE(cta.waits[0].completed);
    EXPECT_TRUE(cta.barriers.empty());  // nothing about counters is claimed
    ASSERT_EQ(cta.buffers.size(), 1u);  // the data landed and was read back at the drain
  }
}

TEST(EmulatorAgreement, EveryCtaIsReadBack) {
  const Case c = gputest::multicast_case(4, 128, 64);
  const Outcome o = gputest::run_emulated({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
  ASSERT_EQ(o.ctas.size(), 4u);
  const std::vector<std::uint8_t> src = fill_bytes(c.inputs[0]);
  for (const CtaRecord& cta : o.ctas) {
    ASSERT_EQ(cta.buffers.size(), 1u);
    EXPECT_EQ(cta.buffers[0].bytes, src) << "CTA " << cta.rank;
  }
}

}  // namespace
}  // namespace collfuzz
