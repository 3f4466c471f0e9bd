// collfuzz-cuda-worker: the persistent GPU worker behind `--executors cuda`. It speaks the
// external-executor protocol with the batch extension (docs/external-executor-protocol.md) on
// stdin/stdout, runs cases through the case pipeline on the CUDA device (or, with --emulate, on
// the CPU emulator of the device tables, for tests), and exits with status 3 after answering a
// request in which the CUDA context was lost, so that the harness starts a fresh process.
//
//   collfuzz-cuda-worker [--device N] [--wait-budget-ms MS] [--grace-us US] [--max-batch N]
//                        [--emulate] [--emulate-arch sm_90a|sm_100a] [--once CASE.json]
//                        [--declare CASE.json|DIR ...]
//
// --declare runs nothing: for each case file (directories searched for *.json) it prints one JSON
// line saying what the executor would do with the case on this device (gpu/case_admission.h):
// {"file", "case", "admission": run|probe_launch|rejected|unavailable|bad_case, "reason"}.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/case_admission.h"
#include "gpu/case_pipeline.h"
#include "gpu/emulator_backend.h"
#include "gpu/memory_tuning.h"
#include "gpu/worker_protocol.h"
#include "harness/core/case_json.h"
#include "harness/core/outcome_json.h"

#ifdef COLLFUZZ_HAVE_CUDA
#include "gpu/cuda_backend.h"
#endif

namespace {

using collfuzz::Arch;
using namespace collfuzz::gpu;

struct Args {
  int device = 0;
  double wait_budget_ms = 100;
  double grace_us = 5;
  std::size_t max_batch = 4096;
  bool emulate = false;
  Arch emulate_arch = Arch::kSm90a;
  std::string once;
  bool declare = false;
  std::vector<std::string> declare_paths;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "collfuzz-cuda-worker: %s\nusage: collfuzz-cuda-worker [--device N] "
               "[--wait-budget-ms MS] [--grace-us US] [--max-batch N] [--emulate] "
               "[--emulate-arch sm_90a|sm_100a] [--once CASE.json] "
               "[--declare CASE.json|DIR ...]\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--device") {
        a.device = std::stoi(value());
      } else if (arg == "--wait-budget-ms") {
        a.wait_budget_ms = std::stod(value());
      } else if (arg == "--grace-us") {
        a.grace_us = std::stod(value());
      } else if (arg == "--max-batch") {
        a.max_batch = static_cast<std::size_t>(std::stoul(value()));
      } else if (arg == "--emulate") {
        a.emulate = true;
      } else if (arg == "--emulate-arch") {
        const std::string v = value();
        if (v == "sm_90a") {
          a.emulate_arch = Arch::kSm90a;
        } else if (v == "sm_100a") {
          a.emulate_arch = Arch::kSm100a;
        } else {
          usage("unknown arch " + v);
        }
      } else if (arg == "--once") {
        a.once = value();
      } else if (arg == "--declare") {
        a.declare = true;
      } else if (a.declare && arg.rfind("--", 0) != 0) {
        a.declare_paths.push_back(arg);
      } else {
        usage("unknown argument " + arg);
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + arg);
    }
  }
  if (a.wait_budget_ms <= 0 || a.grace_us < 0 || a.max_batch == 0) usage("values out of range");
  if (a.declare && a.declare_paths.empty()) usage("--declare needs case files or directories");
  return a;
}

std::unique_ptr<DeviceBackend> make_backend(const Args& a, std::string& unavailable) {
  if (a.emulate) return std::make_unique<EmulatorBackend>(a.emulate_arch);
#ifdef COLLFUZZ_HAVE_CUDA
  CudaBackendOptions o;
  o.device = a.device;
  auto backend = make_cuda_backend(o);
  unavailable = backend->unavailable_reason();
  return backend;
#else
  unavailable = "collfuzz was built without CUDA (nvcc was not found at configure time)";
  return nullptr;
#endif
}

// The case files under `paths` (directories searched recursively for *.json), each sorted.
std::vector<std::filesystem::path> case_files(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.emplace_back(p);
      continue;
    }
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(p, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        found.push_back(entry.path());
      }
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// --declare: what the executor would do with each case on this device; nothing runs.
int declare(const std::vector<std::string>& paths, const DeviceBackend* backend,
            const std::string& unavailable, FILE* out) {
  for (const auto& file : case_files(paths)) {
    nlohmann::json line{{"file", file.string()}};
    try {
      const collfuzz::Case c = collfuzz::load_case_file(file);
      line["case"] = c.name;
      if (!backend || !unavailable.empty()) {
        line["admission"] = "unavailable";
        line["reason"] = unavailable;
      } else {
        const Admission a = admit_case(c, *backend);
        line["admission"] = admission_name(a.kind);
        if (a.kind == Admission::Kind::kUnavailable) {
          line["reason"] = a.reason;
        } else if (a.kind == Admission::Kind::kUndefined && a.undefined) {
          line["reason"] = "the plan's run meets undefined behaviour: " +
                           std::string(to_string(a.undefined->code)) + " (" + a.undefined->detail +
                           ")";
        } else if (a.diagnostic) {
          line["reason"] = (a.kind == Admission::Kind::kProbeLaunch
                                ? "the lowering predicts a launch failure, which the device is "
                                  "asked about: "
                                : "Mosaic GPU's runtime aborts before the launch: ") +
                           stage_exception_message(*a.diagnostic);
        }
      }
    } catch (const std::exception& e) {
      line["case"] = file.stem().string();
      line["admission"] = "bad_case";
      line["reason"] = e.what();
    }
    std::fprintf(out, "%s\n", line.dump().c_str());
  }
  std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  keep_freed_memory();
  // stdout is protocol-only: keep a private copy for the protocol, and send everything else that
  // writes to fd 1 (driver messages, printf) to stderr.
  const int protocol_fd = ::dup(1);
  ::dup2(2, 1);
  FILE* protocol = ::fdopen(protocol_fd, "w");
  if (!protocol) return 3;

  std::string unavailable;
  std::unique_ptr<DeviceBackend> backend = make_backend(args, unavailable);
  PipelineOptions options;
  options.timing.timeout_ns = static_cast<std::uint64_t>(args.wait_budget_ms * 1e6);
  options.timing.grace_ns = static_cast<std::uint64_t>(args.grace_us * 1e3);
  options.max_batch_cases = args.max_batch;
  std::unique_ptr<CasePipeline> pipeline;
  WorkerHello hello;
  hello.unavailable = unavailable;
  if (backend) {
    hello.info = backend->info();
    if (unavailable.empty()) pipeline = std::make_unique<CasePipeline>(*backend, options);
  }
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", args.wait_budget_ms);
  hello.info["wait_budget_ms"] = budget;
  if (args.declare) return declare(args.declare_paths, backend.get(), unavailable, protocol);
  const RunCases run = [&](const std::vector<collfuzz::Case>& cases) {
    return pipeline->run(cases);
  };

  if (!args.once.empty()) {
    const collfuzz::Case c = collfuzz::load_case_file(args.once);
    std::vector<collfuzz::Outcome> out;
    if (pipeline) {
      out = pipeline->run({c});
    } else {
      collfuzz::Outcome o;
      o.executor = hello.name;
      o.reason = hello.unavailable;
      out.push_back(o);
    }
    std::fprintf(protocol, "%s\n", collfuzz::outcome_to_json(out.front()).dump(2).c_str());
    std::fclose(protocol);
    return 0;
  }

  std::fprintf(protocol, "%s\n", hello_line(hello).c_str());
  std::fflush(protocol);
  std::string line;
  while (std::getline(std::cin, line)) {
    const WorkerResponse response = handle_request(line, hello, run);
    if (response.line.empty()) continue;
    std::fwrite(response.line.data(), 1, response.line.size(), protocol);
    std::fputc('\n', protocol);
    std::fwrite(response.blob.data(), 1, response.blob.size(), protocol);
    std::fflush(protocol);
    if (pipeline && pipeline->context_lost()) {
      std::fprintf(stderr, "collfuzz-cuda-worker: the CUDA context was lost; exiting\n");
      std::fclose(protocol);
      return 3;
    }
  }
  std::fclose(protocol);
  return 0;
}
