// The `cuda` executor, harness side: it runs cases in the persistent GPU worker
// (collfuzz-cuda-worker, gpu/worker_main.cpp) over the external-executor protocol with batch
// requests. A worker that dies, breaks the protocol, loses its CUDA context or does not answer in
// time is killed and restarted; the cases of a failed multi-case request are rerun one per
// request, so that only the case that broke it is reported (crash, or timeout), and the run goes
// on. Without a worker binary or without an NVIDIA device the executor says unavailable before
// starting anything.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/worker_process.h"
#include "harness/executors/executor.h"

namespace collfuzz::gpu {

struct CudaExecutorOptions {
  std::vector<std::string> worker_argv;  // the worker and its arguments
  double request_timeout_s = 60;         // per request, plus per_case_timeout_s per case in it
  double per_case_timeout_s = 0.25;
  double startup_timeout_s = 60;
  std::size_t max_request_cases = 1024;
  bool require_device_node = true;  // say unavailable when /dev has no NVIDIA GPU
  std::string log_dir;              // the worker's stderr log ("": a private temporary directory)
};

class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(CudaExecutorOptions options);

  std::string name() const override { return "cuda"; }
  Profile profile() const override { return Profile::kMosaic; }
  std::string unavailable_reason() const override;
  Outcome run(const Case& c) override;
  std::vector<Outcome> run_batch(const std::vector<Case>& cases) override;

  int restarts() const { return restarts_; }
  const std::map<std::string, std::string>& hello_info() const { return info_; }

 private:
  enum class Failure : std::uint8_t { kNone, kTimeout, kCrash };
  bool ensure_started(std::string& why_not);
  void restart_later(const std::string& why);
  // One request; on a worker failure, `failure` and `reason` say what happened.
  std::vector<Outcome> request(const std::vector<Case>& cases, Failure& failure,
                               std::string& reason);
  std::vector<Outcome> run_chunk(const std::vector<Case>& cases);
  Outcome failed(OutcomeKind kind, std::string reason) const;

  CudaExecutorOptions options_;
  std::unique_ptr<WorkerProcess> worker_;
  std::string unavailable_;  // the worker's own answer
  std::map<std::string, std::string> info_;
  std::int64_t next_id_ = 1;
  int restarts_ = 0;
};

// The worker the `cuda` executor runs: $COLLFUZZ_CUDA_WORKER, else collfuzz-cuda-worker next to
// the running program, else in the build directory; extra arguments from
// $COLLFUZZ_CUDA_WORKER_ARGS (whitespace-separated, e.g. "--wait-budget-ms 50").
std::vector<std::string> default_worker_argv();

}  // namespace collfuzz::gpu
