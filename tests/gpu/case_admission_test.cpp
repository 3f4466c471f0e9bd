// The executor's declaration (gpu/case_admission.h) is what it does: for every corpus case, on the
// emulated sm_90a and sm_100a devices, a case declared `run` comes back run (completed or timed
// out), `rejected` and `probe_launch` come back rejected at launch (the emulator refuses the
// launches the lowering predicts), and `unavailable` comes back unavailable with the declared
// reason. The GPU check takes its required cases from this declaration.
#include <gtest/gtest.h>

#include "gpu/case_admission.h"
#include "tests/gpu/gpu_test_util.h"

namespace collfuzz {
namespace {

void expect_declaration_holds(Arch arch, int& declared_runnable) {
  gpu::EmulatorBackend backend(arch);
  for (const auto& file : gputest::corpus_files()) {
    const Case c = load_case_file(file);
    const gpu::Admission a = gpu::admit_case(c, backend);
    const Outcome o = gputest::run_emulated({c}, arch).front();
    SCOPED_TRACE(file.string() + " declared " + gpu::admission_name(a.kind) + ", ran " +
                 std::string(to_string(o.kind)) + ": " + o.reason);
    switch (a.kind) {
      case gpu::Admission::Kind::kRun:
        ++declared_runnable;
        EXPECT_TRUE(o.kind == OutcomeKind::kCompleted || o.kind == OutcomeKind::kTimeout);
        EXPECT_TRUE(a.encoded.has_value());
        break;
      case gpu::Admission::Kind::kRejected:
      case gpu::Admission::Kind::kProbeLaunch:
        ++declared_runnable;
        ASSERT_EQ(o.kind, OutcomeKind::kRejected);
        EXPECT_EQ(o.diagnostic->stage, "launch");
        EXPECT_TRUE(a.diagnostic.has_value());
        break;
      case gpu::Admission::Kind::kUndefined:
        ASSERT_EQ(o.kind, OutcomeKind::kUndefined);
        ASSERT_TRUE(a.undefined && o.undefined);
        EXPECT_EQ(o.undefined->code, a.undefined->code);
        break;
      case gpu::Admission::Kind::kUnavailable:
        EXPECT_EQ(o.kind, OutcomeKind::kUnavailable);
        EXPECT_EQ(o.reason, a.reason);
        EXPECT_FALSE(a.reason.empty());
        break;
    }
  }
}

TEST(CaseAdmission, TheDeclarationIsWhatTheEmulatedExecutorDoes) {
  int runnable_sm90a = 0;
  int runnable_sm100a = 0;
  expect_declaration_holds(Arch::kSm90a, runnable_sm90a);
  expect_declaration_holds(Arch::kSm100a, runnable_sm100a);
  // The corpus keeps both devices busy: a declaration that refused everything would pass above.
  EXPECT_GE(runnable_sm90a, 50);
  EXPECT_GE(runnable_sm100a, 3);
}

TEST(CaseAdmission, NamesWhyACaseIsUnavailable) {
  gpu::EmulatorBackend hopper(Arch::kSm90a);
  const gpu::Admission other_target =
      gpu::admit_case(gputest::corpus_case("alloc.tmem.rank__1d"), hopper);
  EXPECT_EQ(other_target.kind, gpu::Admission::Kind::kUnavailable);
  EXPECT_NE(other_target.reason.find("the case targets sm_100a"), std::string::npos);
  const gpu::Admission int4 =
      gpu::admit_case(gputest::corpus_case("mode.plain__int4_single_element_unwritten"), hopper);
  EXPECT_EQ(int4.kind, gpu::Admission::Kind::kUnavailable);
  EXPECT_NE(int4.reason.find("SMEM buffer that the layout gives fewer bytes"), std::string::npos);
  EXPECT_EQ(gpu::admit_case(gputest::corpus_case("mode.multicast__cluster4_rows"), hopper).kind,
            gpu::Admission::Kind::kRun);
}

}  // namespace
}  // namespace collfuzz
