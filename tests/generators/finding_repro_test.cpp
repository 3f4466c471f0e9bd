// The mode of a finding's JAX script (finding_repro.h): the disagreeing executor's own mode, and
// for executors that are not JAX, one that runs on the machine that found the finding.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include "harness/campaign/finding_repro.h"
#include "harness/campaign/finding_repro_run.h"

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

// A finding's script run once (finding_repro_run.h): its exit and stderr read as yes/no/error.
constexpr int kExit0 = 0;
constexpr int kExit1 = 1 << 8;  // a wait status: exited 1

TEST(FindingReproRun, AnAssertionErrorIsAReproduction) {
  const std::string tb =
      "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
      "ValueError: Barrier deallocated\n\nThe above exception was the direct cause of the "
      "following exception:\n\nTraceback (most recent call last):\n  File \"x.py\", line 9\n"
      "AssertionError: output out[1, 2]: expected 7, got 0 (3 of 64 compared elements differ)\n";
  const auto r = classify_script_run(kExit1, tb, "");
  EXPECT_EQ(r["reproduced"], "yes");
  EXPECT_EQ(r["why"], "output out[1, 2]: expected 7, got 0 (3 of 64 compared elements differ)");
}

TEST(FindingReproRun, AScriptThatPassesDoesNotReproduce) {
  const auto r = classify_script_run(kExit0, "some JAX warning\n", "as predicted: ...");
  EXPECT_EQ(r["reproduced"], "no");
}

TEST(FindingReproRun, AnyOtherEndIsAnError) {
  const std::string tb =
      "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
      "ModuleNotFoundError: No module named 'jax'\n";
  auto r = classify_script_run(kExit1, tb, "");
  EXPECT_EQ(r["reproduced"], "error");
  EXPECT_EQ(r["why"], "the script raised ModuleNotFoundError: No module named 'jax'");
  r = classify_script_run(SIGKILL, "", "");  // a wait status: killed by SIGKILL
  EXPECT_EQ(r["reproduced"], "error");
  EXPECT_EQ(r["why"], "the script died of SIGKILL");
  r = classify_script_run(kExit1, "no traceback here\n", "");
  EXPECT_EQ(r["reproduced"], "error");
  // An "AssertionError" line outside a traceback is not the script's end.
  r = classify_script_run(kExit1, "AssertionError: printed, not raised\n", "");
  EXPECT_EQ(r["reproduced"], "error");
}

}  // namespace
}  // namespace collfuzz::campaign
