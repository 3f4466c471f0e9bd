// Helpers for the CUDA executor's host-side tests: inline cases, corpus cases, and the emulated
// pipeline (the device tables run on the CPU emulator).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpu/case_pipeline.h"
#include "gpu/emulator_backend.h"
#include "gpu/plan_encoder.h"
#include "harness/core/case.h"
#include "harness/core/case_json.h"
#include "harness/lowering/lowering.h"

namespace collfuzz::gputest {

inline Case parse_case(const std::string& text) {
  return case_from_json(nlohmann::json::parse(text));
}

// A case with the given mesh, target, inputs and program (JSON fragments).
inline Case make_case(const std::string& mesh, const std::string& target, const std::string& inputs,
                      const std::string& program, const std::string& outputs = "[]",
                      const std::string& name = "t") {
  return parse_case(R"({"format": 1, "name": ")" + name + R"(", "mesh": )" + mesh +
                    R"(, "target": )" + target + R"(, "inputs": )" + inputs + R"(, "outputs": )" +
                    outputs + R"(, "program": )" + program + "}");
}

inline constexpr const char* kLane = R"({"arch": "sm_90a", "semantics": "lane"})";
inline constexpr const char* kWarpgroup = R"({"arch": "sm_90a", "semantics": "warpgroup"})";

// One copy of x[rows, cols] (f32) into dst over `collective` (a JSON value or "null"), then a
// wait, on a cluster of `n` CTAs along "x".
inline Case multicast_case(int n, int rows, int cols, const std::string& collective = R"("x")",
                           const std::string& name = "t") {
  const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  return make_case(R"({"cluster": [)" + std::to_string(n) + R"(], "cluster_names": ["x"]})", kLane,
                   R"([{"name": "x", "shape": )" + shape + R"(, "dtype": "float32"}])",
                   R"([{"op": "run_scoped", "allocs": [
                         {"name": "dst", "kind": "smem", "shape": )" +
                       shape + R"(, "dtype": "float32"},
                         {"name": "bar", "kind": "barrier"}],
                       "body": [
                         {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                          "barrier": {"alloc": "bar"}, "collective_axes": )" +
                       collective + R"(},
                         {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}])",
                   "[]", name);
}

inline std::filesystem::path corpus_dir() {
  return std::filesystem::path(COLLFUZZ_SOURCE_DIR) / "corpus";
}

inline Case corpus_case(const std::string& name) {
  return load_case_file(corpus_dir() / (name + ".json"));
}

inline std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir())) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline gpu::EncodedCase encode_ok(const Case& c) {
  lowering::LoweringResult r = lowering::lower_case(c);
  EXPECT_FALSE(r.diagnostic.has_value()) << (r.diagnostic ? r.diagnostic->message : "");
  gpu::EncodeResult e = gpu::encode_plan(r.plan);
  EXPECT_TRUE(e.encoded.has_value()) << e.unavailable;
  return e.encoded ? std::move(*e.encoded) : gpu::EncodedCase{};
}

// Runs cases through the pipeline on the CPU emulator.
inline std::vector<Outcome> run_emulated(const std::vector<Case>& cases, Arch arch = Arch::kSm90a) {
  gpu::EmulatorBackend backend(arch);
  gpu::CasePipeline pipeline(backend, gpu::PipelineOptions{});
  return pipeline.run(cases);
}

}  // namespace collfuzz::gputest
