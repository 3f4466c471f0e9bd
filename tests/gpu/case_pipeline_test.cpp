// The pipeline around the device: batching by launch shape, batch limits, order of outcomes,
// what is unavailable and why, launch probes, refused launches retried case by case, and a lost
// context reported as a crash for its batch and everything after it.
#include "gpu/case_pipeline.h"

#include <gtest/gtest.h>

#include "harness/core/fill.h"
#include "harness/core/outcome_json.h"
#include "oracles/oracles.h"
#include "tests/gpu/gpu_test_util.h"

namespace collfuzz::gpu {
namespace {

using gputest::multicast_case;

// The emulator, with launches that can be refused or lose the context, and a launch log.
class ScriptedBackend final : public DeviceBackend {
 public:
  std::string unavailable_reason() const override { return inner_.unavailable_reason(); }
  std::optional<Arch> target_arch() const override { return inner_.target_arch(); }
  std::map<std::string, std::string> info() const override { return inner_.info(); }
  std::uint64_t input_arena_bytes() const override { return arena_bytes; }
  std::string upload_input(std::uint64_t o, const std::vector<std::uint8_t>& b) override {
    ++uploads;
    return inner_.upload_input(o, b);
  }
  std::optional<Diagnostic> encode_tensor_map(const TensorMapRequest& r, std::uint64_t o,
                                              TensorMapBytes& out) override {
    if (refuse_tensor_maps)
      return Diagnostic{"launch", "abort", "cuTensorMapEncodeTiled failed: x", "", ""};
    return inner_.encode_tensor_map(r, o, out);
  }
  LaunchResult launch(const BatchImage& image, const LaunchTiming& t) override {
    batch_sizes.push_back(image.num_cases());
    if (sticky_at == static_cast<int>(batch_sizes.size())) {
      LaunchResult r;
      r.status = LaunchResult::Status::kSticky;
      r.message = "cudaErrorIllegalAddress";
      return r;
    }
    if (image.num_cases() > refuse_above) {
      LaunchResult r;
      r.status = LaunchResult::Status::kRefused;
      r.message = "too many";
      return r;
    }
    if (refuse_smem_above > 0 && image.smem_bytes() > refuse_smem_above) {
      LaunchResult r;
      r.status = LaunchResult::Status::kRefused;
      r.message = "smem";
      return r;
    }
    return inner_.launch(image, t);
  }
  std::optional<Diagnostic> probe_launch(const LaunchProbe& p) override {
    ++probes;
    if (refuse_smem_above > 0 && p.smem_bytes > refuse_smem_above) {
      return Diagnostic{"launch", "abort", "cuLaunchKernelEx: out of resources", "", ""};
    }
    return inner_.probe_launch(p);
  }

  std::vector<std::uint32_t> batch_sizes;
  std::uint32_t refuse_above = 1u << 30;
  std::uint32_t refuse_smem_above = 0;
  int sticky_at = 0;
  int probes = 0;
  int uploads = 0;
  bool refuse_tensor_maps = false;
  std::uint64_t arena_bytes = std::uint64_t{1} << 30;

 private:
  EmulatorBackend inner_;
};

TEST(CasePipeline, CasesOfOneShapeShareOneLaunchAndKeepTheirOrder) {
  ScriptedBackend backend;
  CasePipeline pipeline(backend, PipelineOptions{});
  std::vector<Case> cases;
  for (int i = 0; i < 5; ++i) {
    cases.push_back(multicast_case(2, 64, 64, R"("x")", "two" + std::to_string(i)));
    cases.push_back(multicast_case(4, 64, 64, R"("x")", "four" + std::to_string(i)));
  }
  const std::vector<Outcome> out = pipeline.run(cases);
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(backend.batch_sizes, (std::vector<std::uint32_t>{5, 5}));
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i].kind, OutcomeKind::kCompleted) << i << ": " << out[i].reason;
    EXPECT_EQ(out[i].ctas.size(), i % 2 == 0 ? 2u : 4u) << i;
    EXPECT_EQ(out[i].executor, "cuda");
    EXPECT_EQ(out[i].info.at("batch_cases"), "5");
  }
  EXPECT_EQ(backend.uploads, 1);  // one distinct input, uploaded once
  EXPECT_EQ(pipeline.stats().launches, 2u);
}

TEST(CasePipeline, BatchesAreCappedAndTheArenaRefills) {
  ScriptedBackend backend;
  backend.arena_bytes = 3 * (64 * 64 * 4 + 2 * kInputGuardBytes) + 1024;
  PipelineOptions options;
  options.max_batch_cases = 3;
  CasePipeline pipeline(backend, options);
  std::vector<Case> cases;
  for (int i = 0; i < 7; ++i) {
    Case c = multicast_case(2, 64, 64);
    c.inputs[0].fill.pattern = FillPattern::kRandom;
    c.inputs[0].fill.seed = static_cast<std::uint64_t>(i);
    cases.push_back(c);
  }
  const std::vector<Outcome> out = pipeline.run(cases);
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i].kind, OutcomeKind::kCompleted) << out[i].reason;
    // Each case saw its own input, even across arena refills.
    EXPECT_EQ(out[i].ctas[1].buffers[0].bytes, fill_bytes(cases[i].inputs[0])) << i;
  }
  EXPECT_EQ(backend.batch_sizes, (std::vector<std::uint32_t>{3, 3, 1}));
  EXPECT_EQ(backend.uploads, 7);
}

TEST(CasePipeline, OtherTargetsAndRejectedCasesAreUnavailable) {
  ScriptedBackend backend;
  CasePipeline pipeline(backend, PipelineOptions{});
  Case sm80 = multicast_case(1, 64, 64, "null");
  sm80.target.arch = Arch::kSm80;
  Case sm100 = multicast_case(2, 64, 64);
  sm100.target.arch = Arch::kSm100a;
  const Case rejected = gputest::corpus_case("launch_context.box_max_256__512_rows");
  const std::vector<Outcome> out = pipeline.run({sm80, sm100, rejected});
  ASSERT_EQ(out[0].kind, OutcomeKind::kUnavailable);
  EXPECT_NE(out[0].reason.find("targets sm_80"), std::string::npos) << out[0].reason;
  ASSERT_EQ(out[1].kind, OutcomeKind::kUnavailable);
  EXPECT_NE(out[1].reason.find("targets sm_100a"), std::string::npos) << out[1].reason;
  ASSERT_EQ(out[2].kind, OutcomeKind::kUnavailable);
  EXPECT_NE(out[2].reason.find("shared lowering rejects"), std::string::npos) << out[2].reason;
  EXPECT_TRUE(backend.batch_sizes.empty());
}

TEST(CasePipeline, LaunchPredictionsAreTriedOnTheDevice) {
  ScriptedBackend backend;
  CasePipeline pipeline(backend, PipelineOptions{});
  nlohmann::json expect;
  const Case c = load_case_file(gputest::corpus_dir() / "launch.cluster_size__32.json", &expect);
  const Outcome o = pipeline.run({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kRejected) << o.reason;
  EXPECT_EQ(o.diagnostic->stage, "launch");
  // Cluster (4, 4, 2) is CUDA (2, 4, 4): the message Mosaic GPU's runtime prints.
  EXPECT_EQ(o.diagnostic->message,
            "cuLaunchKernel failed with invalid cluster size (2, 4, 4): maximum is 16");
  const Verdict v = compare(c, outcome_from_json(expect, c, "expect"), o);
  EXPECT_TRUE(v.mismatches.empty()) << (v.mismatches.empty() ? "" : v.mismatches[0].detail);
  EXPECT_EQ(backend.probes, 1);
}

TEST(CasePipeline, ARefusedBatchIsRetriedCaseByCase) {
  ScriptedBackend backend;
  backend.refuse_above = 1;
  CasePipeline pipeline(backend, PipelineOptions{});
  const std::vector<Outcome> out =
      pipeline.run({multicast_case(2, 64, 64), multicast_case(2, 32, 64)});
  EXPECT_EQ(backend.batch_sizes, (std::vector<std::uint32_t>{2, 1, 1}));
  for (const Outcome& o : out) EXPECT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
}

TEST(CasePipeline, ACaseTheDeviceCannotFitIsALaunchDiagnostic) {
  ScriptedBackend backend;
  const Case small = multicast_case(2, 16, 64);
  const Case big = multicast_case(2, 128, 64);
  backend.refuse_smem_above = gputest::encode_ok(small).smem_bytes;
  CasePipeline pipeline(backend, PipelineOptions{});
  const std::vector<Outcome> out = pipeline.run({small, big});
  ASSERT_EQ(out[0].kind, OutcomeKind::kCompleted) << out[0].reason;
  ASSERT_EQ(out[1].kind, OutcomeKind::kRejected) << out[1].reason;
  EXPECT_EQ(out[1].diagnostic->message, "cuLaunchKernelEx: out of resources");
}

TEST(CasePipeline, ALostContextCrashesItsBatchAndWhatFollows) {
  ScriptedBackend backend;
  backend.sticky_at = 1;
  CasePipeline pipeline(backend, PipelineOptions{});
  const std::vector<Outcome> out =
      pipeline.run({multicast_case(2, 64, 64), multicast_case(4, 64, 64)});
  ASSERT_EQ(out[0].kind, OutcomeKind::kCrash);
  EXPECT_EQ(out[0].info.at("cuda_context_lost"), "1");
  EXPECT_NE(out[0].reason.find("cudaErrorIllegalAddress"), std::string::npos);
  ASSERT_EQ(out[1].kind, OutcomeKind::kCrash);
  EXPECT_NE(out[1].reason.find("context was lost"), std::string::npos) << out[1].reason;
  EXPECT_TRUE(pipeline.context_lost());
  EXPECT_EQ(pipeline.run({multicast_case(2, 64, 64)}).front().kind, OutcomeKind::kCrash);
  EXPECT_EQ(backend.batch_sizes.size(), 1u);
}

TEST(CasePipeline, ARefusedTensorMapIsALaunchAbort) {
  ScriptedBackend backend;
  backend.refuse_tensor_maps = true;
  CasePipeline pipeline(backend, PipelineOptions{});
  const Outcome o = pipeline.run({multicast_case(2, 64, 64)}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->exception, "abort");
  EXPECT_EQ(o.diagnostic->message, "cuTensorMapEncodeTiled failed: x");
}

TEST(CasePipeline, TheVerdictAgainstTheReferenceForAPlainMulticast) {
  const Case c = gputest::corpus_case("mode.multicast__cluster4_rows");
  const Outcome o = gputest::run_emulated({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
  nlohmann::json expect;
  load_case_file(gputest::corpus_dir() / "mode.multicast__cluster4_rows.json", &expect);
  const Outcome expected = outcome_from_json(expect, c, "expect");
  const Verdict v = compare(c, expected, o);
  EXPECT_TRUE(v.mismatches.empty()) << (v.mismatches.empty() ? "" : v.mismatches[0].detail);
  EXPECT_GT(v.unobserved, 0);  // barrier counters are not observed on the device
}

}  // namespace
}  // namespace collfuzz::gpu
