// The CUDA executor's speed: cases/s by cluster size and tile size (bytes each CTA receives),
// batched (one launch for many cases, one cluster each) and unbatched (one launch per case),
// against a launch floor (the empty cluster kernel launched and waited for the same way), and
// the host's share (lowering, encoding, batching, decoding) without a device. items_per_second
// is cases/s (clusters/s for the floor).
//   build/<dir>/collfuzz_cuda_bench --benchmark_counters_tabular=true
//   build/<dir>/collfuzz_cuda_bench --benchmark_filter=Host   # runs without a GPU
// The GPU families skip with an error where there is no usable CUDA device.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/case_pipeline.h"
#include "gpu/cuda_executor.h"
#include "gpu/emulator_backend.h"
#include "gpu/memory_tuning.h"
#include "harness/core/case_json.h"

#ifdef COLLFUZZ_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/cuda_backend.h"
#include "gpu/kernel_launch.h"
#endif

namespace collfuzz::gpu {
namespace {

// A multicast of an f32 [rows, 64] tile over a cluster of `ctas` along "x": every CTA receives
// the whole tile (`tile_kib` KiB), each loading 1/ctas of it; then every CTA waits.
Case tile_case(std::int64_t ctas, std::int64_t tile_kib) {
  const std::int64_t rows = tile_kib * 1024 / (64 * 4);
  const std::string shape = "[" + std::to_string(rows) + ", 64]";
  const std::string text = R"({"format": 1, "name": "bench", "mesh": {"cluster": [)" +
                           std::to_string(ctas) + R"(], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "semantics": "lane"},
      "inputs": [{"name": "x", "shape": )" +
                           shape + R"(, "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "dst", "kind": "smem", "shape": )" +
                           shape + R"(, "dtype": "float32"},
          {"name": "bar", "kind": "barrier"}],
        "body": [
          {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
           "barrier": {"alloc": "bar"}, "collective_axes": "x"},
          {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]})";
  return case_from_json(nlohmann::json::parse(text));
}

// No device: every case "ran" and every buffer was read back (as zeros); nothing else happened.
// What remains is the host's work, including copying every CTA's buffers into the outcome.
class NullBackend final : public DeviceBackend {
 public:
  std::string unavailable_reason() const override { return {}; }
  std::optional<Arch> target_arch() const override { return Arch::kSm90a; }
  std::map<std::string, std::string> info() const override { return {{"device", "none"}}; }
  std::uint64_t input_arena_bytes() const override { return std::uint64_t{1} << 30; }
  std::string upload_input(std::uint64_t, const std::vector<std::uint8_t>&) override { return {}; }
  std::optional<Diagnostic> encode_tensor_map(const TensorMapRequest&, std::uint64_t,
                                              TensorMapBytes&) override {
    return std::nullopt;
  }
  LaunchResult launch(const BatchImage& image, const LaunchTiming&) override {
    // Zeroed once; only the status words change (a device zeroes its results itself).
    if (results_.size() < image.results_bytes()) results_.assign(image.results_bytes(), 0);
    const DevCase* cases = table<DevCase>(image.bytes(), image.layout().cases);
    const DevScope* scopes = table<DevScope>(image.bytes(), image.layout().scopes);
    const DevBuffer* buffers = table<DevBuffer>(image.bytes(), image.layout().buffers);
    for (std::uint32_t i = 0; i < image.num_cases(); ++i) {
      std::uint8_t* results = results_.data() + image.results_base(i);
      const DevCaseStatus ran{kStatusRan, 0, {}};
      std::memcpy(results, &ran, sizeof ran);
      const DevCase& c = cases[i];
      for (std::uint32_t k = 0; k < c.num_ctas * c.num_scopes; ++k) {
        const DevScope& sc = scopes[c.scope_base + k];
        for (std::uint32_t b = 0; b < sc.num_buffers; ++b) {
          const std::uint32_t one = 1;
          std::memcpy(results + buffers[c.buffer_base + sc.first_buffer + b].flag_offset, &one, 4);
        }
      }
    }
    LaunchResult r;
    r.results = results_.data();
    return r;
  }
  std::optional<Diagnostic> probe_launch(const LaunchProbe&) override { return std::nullopt; }

 private:
  std::vector<std::uint8_t> results_;
};

void run_pipeline(benchmark::State& state, DeviceBackend& backend) {
  const std::int64_t ctas = state.range(0);
  const std::int64_t kib = state.range(1);
  const std::int64_t batch = state.range(2);
  CasePipeline pipeline(backend, PipelineOptions{});
  const std::vector<Case> cases(static_cast<std::size_t>(batch), tile_case(ctas, kib));
  const Outcome first = pipeline.run({cases.front()}).front();
  if (first.kind != OutcomeKind::kCompleted) {
    state.SkipWithError(("the case does not complete: " + first.reason).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(pipeline.run(cases));
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["launches/iter"] = benchmark::Counter(
      static_cast<double>(pipeline.stats().launches) / static_cast<double>(state.iterations() + 1));
}

void tile_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t ctas : {1, 2, 4, 8, 16}) {
    for (std::int64_t kib : {1, 4, 16}) {
      for (std::int64_t batch : {1, 1024}) b->Args({ctas, kib, batch});
    }
  }
  b->ArgNames({"ctas", "tile_kib", "batch"});
}

// The host's share of a case: shared lowering, encoding, batch image, decoding.
void BM_HostPipeline(benchmark::State& state) {
  NullBackend backend;
  run_pipeline(state, backend);
}
BENCHMARK(BM_HostPipeline)->Apply(tile_args)->UseRealTime();

// The same on the CPU emulator of the device tables (what --emulate costs).
void BM_EmulatedPipeline(benchmark::State& state) {
  EmulatorBackend backend;
  run_pipeline(state, backend);
}
BENCHMARK(BM_EmulatedPipeline)->Args({4, 16, 256})->Args({16, 16, 256})->UseRealTime();

#ifdef COLLFUZZ_HAVE_CUDA
DeviceBackend& cuda_backend() {
  static const std::unique_ptr<DeviceBackend> backend = make_cuda_backend(CudaBackendOptions{});
  return *backend;
}

// In process: pipeline + interpreter kernel on the GPU.
void BM_CudaPipeline(benchmark::State& state) {
  DeviceBackend& backend = cuda_backend();
  if (!backend.unavailable_reason().empty()) {
    state.SkipWithError(backend.unavailable_reason().c_str());
    return;
  }
  run_pipeline(state, backend);
  state.SetLabel(backend.info()["device"]);
}
BENCHMARK(BM_CudaPipeline)->Apply(tile_args)->UseRealTime();

// The launch floor: the empty cluster kernel, `clusters` clusters per launch, launched with
// cudaLaunchKernelEx and waited for by polling an event, as the backend does.
void BM_LaunchFloor(benchmark::State& state) {
  DeviceBackend& backend = cuda_backend();
  if (!backend.unavailable_reason().empty()) {
    state.SkipWithError(backend.unavailable_reason().c_str());
    return;
  }
  const auto ctas = static_cast<std::uint32_t>(state.range(0));
  const auto clusters = static_cast<std::uint32_t>(state.range(1));
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEventCreate(&done);
  KernelConfig k;
  k.grid[0] = ctas * clusters;
  k.cluster[0] = ctas;
  k.block_threads = 128;
  k.stream = stream;
  for (auto _ : state) {
    const int e = launch_empty_cluster(k);
    if (e != 0) {
      state.SkipWithError(cudaGetErrorString(static_cast<cudaError_t>(e)));
      break;
    }
    cudaEventRecord(done, stream);
    while (cudaEventQuery(done) == cudaErrorNotReady) {
    }
  }
  state.SetItemsProcessed(state.iterations() * clusters);
  cudaEventDestroy(done);
  cudaStreamDestroy(stream);
}
BENCHMARK(BM_LaunchFloor)
    ->ArgsProduct({{1, 2, 4, 8, 16}, {1, 1024}})
    ->ArgNames({"ctas", "clusters"})
    ->UseRealTime();
#endif

// End to end through the `cuda` executor: JSON to the worker process and back.
void BM_CudaExecutor(benchmark::State& state) {
  CudaExecutorOptions o;
  o.worker_argv = default_worker_argv();
  CudaExecutor executor(o);
  if (const std::string why = executor.unavailable_reason(); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::int64_t batch = state.range(2);
  const std::vector<Case> cases(static_cast<std::size_t>(batch),
                                tile_case(state.range(0), state.range(1)));
  const Outcome first = executor.run(cases.front());
  if (first.kind != OutcomeKind::kCompleted) {
    state.SkipWithError((std::string(to_string(first.kind)) + ": " + first.reason).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(executor.run_batch(cases));
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_CudaExecutor)
    ->Args({4, 16, 1})
    ->Args({4, 16, 512})
    ->ArgNames({"ctas", "tile_kib", "batch"})
    ->UseRealTime();

}  // namespace
}  // namespace collfuzz::gpu

// As the worker does: keep freed memory instead of returning it to the system after every batch
// (a batch's outcomes hold every CTA's buffers; returning and refaulting them costs more than
// the rest of the host's work).
int main(int argc, char** argv) {
  collfuzz::gpu::keep_freed_memory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
