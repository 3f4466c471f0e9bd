// The CUDA executor's engine, independent of where it runs: each case goes through the shared
// lowering (a rejected case has no plan to run: `unavailable`, except launch-stage predictions,
// which are tried on the device), the plan is encoded into device tables, cases with the same
// launch shape are batched into one launch with one cluster per case, and the results are
// decoded into outcomes. A refused batch is retried case by case; a sticky error loses the
// context, and every case of that batch and after it is a crash (the worker then restarts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/device_backend.h"
#include "gpu/input_arena.h"
#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

struct PipelineOptions {
  LaunchTiming timing;
  std::size_t max_batch_cases = 4096;
  std::uint64_t max_batch_results_bytes = std::uint64_t{256} << 20;
  std::uint64_t max_batch_table_bytes = std::uint64_t{64} << 20;
  std::string executor = "cuda";
  std::size_t host_threads = 0;  // for lowering, encoding and decoding; 0: the host's cores (<= 16)
};

struct PipelineStats {
  std::uint64_t cases = 0;
  std::uint64_t launches = 0;
  std::uint64_t launched_cases = 0;
  double kernel_ms = 0;
};

class CasePipeline {
 public:
  CasePipeline(DeviceBackend& backend, PipelineOptions options);
  CasePipeline(const CasePipeline&) = delete;
  CasePipeline& operator=(const CasePipeline&) = delete;

  // One outcome per case, in order.
  std::vector<Outcome> run(const std::vector<Case>& cases);
  // A sticky CUDA error happened: nothing more can run in this process.
  bool context_lost() const { return context_lost_; }
  const PipelineStats& stats() const { return stats_; }

 private:
  struct Prepared;
  struct Batch;

  void prepare(const Case& c, Prepared& p);
  void probe_lowering_launch(const Case& c, const Diagnostic& predicted, Prepared& p);
  void run_shape(const LaunchShape& shape, const std::vector<Prepared*>& group);
  bool place_inputs(Prepared& p, std::string& error);
  void flush(Batch& batch);
  void refused(Batch& batch, const std::string& message);
  Outcome outcome(OutcomeKind kind, std::string reason) const;

  DeviceBackend& backend_;
  PipelineOptions options_;
  std::size_t host_threads_;
  InputArena arena_;
  bool context_lost_ = false;
  PipelineStats stats_;
};

}  // namespace collfuzz::gpu
