// Campaign speed: cases per second of a campaign's worker loop (generate, reference, executors,
// the three oracles, signature bookkeeping) on one core, and the parts of it: the loop against the
// simulator (the campaign CI and every machine can run) and against every executor available
// here (JAX's run in their own processes: their time is wall time, not this core's). Run pinned
// to one core:
//   taskset -c 0 build/release/collfuzz_campaign_bench --benchmark_counters_tabular=true
// items_per_second is cases/s.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "generators/case_stream.h"
#include "harness/campaign/campaign_options.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/worker.h"
#include "harness/core/allocator.h"
#include "oracles/reference/reference.h"

namespace collfuzz::campaign {
namespace {

constexpr std::uint64_t kSeed = 1;
constexpr std::int64_t kBatch = 2000;

std::vector<std::unique_ptr<Executor>> default_executors() {
  std::vector<std::unique_ptr<Executor>> out;
  for (const auto& name : available_executors(ExecutorOptions{}))
    out.push_back(make_executor(name, ExecutorOptions{}));
  return out;
}

std::vector<std::unique_ptr<Executor>> simulator_only() {
  std::vector<std::unique_ptr<Executor>> out;
  out.push_back(make_executor("sim", ExecutorOptions{}));
  return out;
}

// A campaign's loop, in process, on one core, no findings written.
void run_campaign(benchmark::State& state, std::vector<std::unique_ptr<Executor>> executors) {
  CaseCheck check(std::move(executors), DiagnosticLevel::kMessage);
  WorkerState ws;
  for (auto _ : state) {
    WorkerConfig config;
    config.seed = kSeed;
    config.case_limit = static_cast<std::int64_t>(ws.next_index) + kBatch;
    config.shrink = false;  // shrinking is per finding, not per case
    Worker worker(config, check, nullptr, nullptr, nullptr, nullptr);
    ws = worker.run(ws);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetLabel("reference vs " + std::to_string(check.executors().size()) + " executor(s), " +
                 allocator_name());
}

// `collfuzz fuzz --executors reference,sim`: the target (10,000 cases/s on one core).
void BM_CampaignReferenceAndSimulator(benchmark::State& state) {
  run_campaign(state, simulator_only());
}
BENCHMARK(BM_CampaignReferenceAndSimulator)->Unit(benchmark::kMillisecond)->MinTime(5.0);

// `collfuzz fuzz` with its default executors: every one available here (with .venv-jax, the JAX
// executors on their sampled cases).
void BM_CampaignDefault(benchmark::State& state) { run_campaign(state, default_executors()); }
BENCHMARK(BM_CampaignDefault)->Unit(benchmark::kMillisecond)->MinTime(5.0)->UseRealTime();

void BM_Generate(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(generators::generate_case(kSeed, i++));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Generate)->MinTime(2.0);

void BM_ReferenceMosaic(benchmark::State& state) {
  std::vector<Case> cases;
  for (std::uint64_t i = 0; i < 4096; ++i) cases.push_back(generators::generate_case(kSeed, i));
  std::size_t k = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(predict(cases[k++ % cases.size()], Profile::kMosaic));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReferenceMosaic)->MinTime(2.0);

void BM_Simulator(benchmark::State& state) {
  auto executors = simulator_only();
  std::vector<Case> cases;
  for (std::uint64_t i = 0; i < 4096; ++i) cases.push_back(generators::generate_case(kSeed, i));
  std::size_t k = 0;
  for (auto _ : state) {
    for (auto& e : executors) benchmark::DoNotOptimize(e->run(cases[k % cases.size()]));
    ++k;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Simulator)->MinTime(2.0);

}  // namespace
}  // namespace collfuzz::campaign
