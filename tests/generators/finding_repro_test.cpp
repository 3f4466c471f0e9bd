// The mode of a finding's JAX script (finding_repro.h): the disagreeing executor's own mode, and
// for executors that are not JAX, one that runs on the machine that found the finding.
#include <gtest/gtest.h>

#include "harness/campaign/finding_repro.h"

namespace collfuzz::campaign {
namespace {

TEST(FindingRepro, AJaxExecutorsFindingGetsItsOwnMode) {
  for (const bool gpu : {false, true}) {
    EXPECT_EQ(repro_mode_for("jax-interpret", gpu), ReproMode::kInterpret);
    EXPECT_EQ(repro_mode_for("jax-lower", gpu), ReproMode::kLower);
    EXPECT_EQ(repro_mode_for("jax-ir", gpu), ReproMode::kLower);
    EXPECT_EQ(repro_mode_for("jax-gpu", gpu), ReproMode::kGpu);
    EXPECT_EQ(repro_mode_for("cuda", gpu), ReproMode::kGpu);
  }
}

TEST(FindingRepro, ASimulatorFindingRunsOnTheMachineThatFoundIt) {
  // On a CPU machine a gpu script fails with "Only interpret mode is supported on CPU backend".
  EXPECT_EQ(repro_mode_for("sim", /*machine_has_gpu=*/false), ReproMode::kInterpret);
  EXPECT_EQ(repro_mode_for("sim", /*machine_has_gpu=*/true), ReproMode::kGpu);
}

}  // namespace
}  // namespace collfuzz::campaign
