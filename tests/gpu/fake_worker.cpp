// A stand-in for collfuzz-cuda-worker in the CUDA executor's tests: it speaks the same protocol
// and misbehaves on request, by case name: a case named "hang..." makes it stop answering,
// "crash..." makes it exit, "sticky..." makes it answer with a lost CUDA context and exit 3 (as
// the real worker does), "garbage..." makes it print a line that is not JSON. Otherwise every
// case completes; its outcome's info carries the process id and the request's size, so that a
// test can see restarts and batching. With --unavailable the hello says unavailable.
//
// Faults for the GPU check's own tests (tests/gpu/gpu_differential_faults.sh), where it stands in
// for the real worker of `ci/gpu-differential`. The first three run every case as
// `collfuzz-cuda-worker --emulate` does (the real case pipeline on the CPU emulator), except the
// case NAME:
//   --emulate-except NAME      answered `unavailable`: a required case made unavailable;
//   --disagree NAME            answered `crash` every time: a case that disagrees on the GPU;
//   --disagree-sometimes NAME  answered `crash` the 1st, 3rd, 5th... time this process sees it
//                              (and run the other times): a flaky case;
//   --silent                   says hello, reads its requests, and never answers one.
// --emulate (which ci/gpu-differential passes in emulation) is accepted and changes nothing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "gpu/case_pipeline.h"
#include "gpu/emulator_backend.h"
#include "gpu/worker_protocol.h"

using collfuzz::Case;
using collfuzz::Outcome;
using collfuzz::OutcomeKind;

int main(int argc, char** argv) {
  collfuzz::gpu::WorkerHello hello;
  hello.info["fake"] = "1";
  bool silent = false;
  std::string planted_unavailable;
  std::string planted_disagreement;
  bool sometimes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--unavailable") hello.unavailable = "fake: no device";
    if (arg == "--silent") silent = true;
    if (arg == "--emulate-except" && i + 1 < argc) planted_unavailable = argv[++i];
    if ((arg == "--disagree" || arg == "--disagree-sometimes") && i + 1 < argc) {
      planted_disagreement = argv[++i];
      sometimes = arg == "--disagree-sometimes";
    }
  }
  std::printf("%s\n", collfuzz::gpu::hello_line(hello).c_str());
  std::fflush(stdout);
  std::string line;
  if (silent) {
    while (std::getline(std::cin, line)) {
    }
    return 0;
  }
  collfuzz::gpu::EmulatorBackend backend;
  std::unique_ptr<collfuzz::gpu::CasePipeline> pipeline;
  if (!planted_unavailable.empty() || !planted_disagreement.empty()) {
    pipeline =
        std::make_unique<collfuzz::gpu::CasePipeline>(backend, collfuzz::gpu::PipelineOptions{});
  }
  int disagreement_seen = 0;
  bool exit_after = false;
  const collfuzz::gpu::RunCases run = [&](const std::vector<Case>& cases) {
    if (pipeline) {
      std::vector<Outcome> out = pipeline->run(cases);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].name == planted_unavailable) {
          out[i] = Outcome{};
          out[i].executor = "cuda";
          out[i].kind = OutcomeKind::kUnavailable;
          out[i].reason = "planted by the fake worker (--emulate-except): not run";
        }
        if (cases[i].name == planted_disagreement && (!sometimes || disagreement_seen++ % 2 == 0)) {
          out[i] = Outcome{};
          out[i].executor = "cuda";
          out[i].kind = OutcomeKind::kCrash;
          out[i].reason = "planted by the fake worker (--disagree): a wrong answer";
        }
      }
      return out;
    }
    std::vector<Outcome> out;
    bool sticky = false;
    for (const Case& c : cases) {
      if (c.name.rfind("hang", 0) == 0) {
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      if (c.name.rfind("crash", 0) == 0) std::_Exit(1);
      if (c.name.rfind("garbage", 0) == 0) {
        std::printf("this is not json\n");
        std::fflush(stdout);
      }
      sticky = sticky || c.name.rfind("sticky", 0) == 0;
    }
    for (const Case& c : cases) {
      Outcome o;
      o.executor = "cuda";
      if (sticky) {
        o.kind = OutcomeKind::kCrash;
        o.reason = "a sticky CUDA error (fake)";
        o.info["cuda_context_lost"] = "1";
      } else {
        o.kind = OutcomeKind::kCompleted;
      }
      o.info["pid"] = std::to_string(::getpid());
      o.info["request_cases"] = std::to_string(cases.size());
      o.info["name"] = c.name;
      out.push_back(o);
    }
    exit_after = sticky;
    return out;
  };
  while (std::getline(std::cin, line)) {
    const collfuzz::gpu::WorkerResponse response = collfuzz::gpu::handle_request(line, hello, run);
    if (response.line.empty()) continue;
    std::fwrite(response.line.data(), 1, response.line.size(), stdout);
    std::fputc('\n', stdout);
    std::fwrite(response.blob.data(), 1, response.blob.size(), stdout);
    std::fflush(stdout);
    if (exit_after) return 3;
  }
  return 0;
}
