// One benchmark family per stage, by tile size and cluster size: the reference checker's
// prediction, the lowering, the simulator (the plan run over the cluster), the oracles, end to end
// (reference + simulator + oracles, what `collfuzz run --executors reference,sim` does per case),
// and a memcpy floor over the bytes the simulated cluster receives. Items are cases; bytes are
// the tile bytes landing in SMEM over all CTAs. docs/performance.md has the command and the table.
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_cases.h"
#include "harness/lowering/lowering.h"
#include "harness/sim/cluster_simulator.h"
#include "harness/sim/simulator.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz::bench {
namespace {

std::int64_t tile(const benchmark::State& s) { return s.range(0); }
std::int64_t ctas(const benchmark::State& s) { return s.range(1); }

void account(benchmark::State& s) {
  s.SetItemsProcessed(static_cast<std::int64_t>(s.iterations()));
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * tile(s) * ctas(s));
}

void BM_Reference(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  for (auto _ : s) benchmark::DoNotOptimize(predict(c, Profile::kMosaic));
  account(s);
}

void BM_Lowering(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  for (auto _ : s) benchmark::DoNotOptimize(lowering::lower_case(c));
  account(s);
}

void BM_Simulator(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  const lowering::LoweringResult lowered = lowering::lower_case(c);
  sim::DeviceMemory memory;
  for (auto _ : s) benchmark::DoNotOptimize(sim::simulate_plan(lowered.plan, memory));
  account(s);
}

// The sim executor's work per case: lowering plus simulation.
void BM_LoweringAndSimulator(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  sim::Simulator simulator;
  for (auto _ : s) benchmark::DoNotOptimize(simulator.run(c));
  account(s);
}

void BM_Oracles(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  const Outcome expected = predict(c, Profile::kMosaic).outcome;
  sim::Simulator simulator;
  Outcome actual = simulator.run(c);
  actual.executor = "sim";
  for (auto _ : s) benchmark::DoNotOptimize(compare(c, expected, actual));
  account(s);
}

void BM_EndToEnd(benchmark::State& s) {
  const Case c = multicast_tile_case(tile(s), ctas(s));
  sim::Simulator simulator;
  for (auto _ : s) {
    const Outcome expected = predict(c, Profile::kMosaic).outcome;
    Outcome actual = simulator.run(c);
    actual.executor = "sim";
    benchmark::DoNotOptimize(compare(c, expected, actual));
  }
  account(s);
}

// The floor: copying the same bytes once, from a GMEM-sized source into per-CTA buffers.
void BM_MemcpyFloor(benchmark::State& s) {
  const auto bytes = static_cast<std::size_t>(tile(s));
  const std::vector<std::uint8_t> src(bytes, 1);
  std::vector<std::vector<std::uint8_t>> dst(static_cast<std::size_t>(ctas(s)),
                                             std::vector<std::uint8_t>(bytes));
  for (auto _ : s) {
    for (auto& d : dst) std::memcpy(d.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  account(s);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tile_bytes", "ctas"});
  for (std::int64_t t : {kSmallTile, std::int64_t{16} * 1024, kLargeTile}) {
    for (std::int64_t n : {1, 2, 4}) b->Args({t, n});
  }
}

BENCHMARK(BM_Reference)->Apply(shapes);
BENCHMARK(BM_Lowering)->Apply(shapes);
BENCHMARK(BM_Simulator)->Apply(shapes);
BENCHMARK(BM_LoweringAndSimulator)->Apply(shapes);
BENCHMARK(BM_Oracles)->Apply(shapes);
BENCHMARK(BM_EndToEnd)->Apply(shapes);
BENCHMARK(BM_MemcpyFloor)->Apply(shapes);

// A 64-step loop on a reused barrier against the same 64 steps written out (issue 28, item 4):
// the reference and the sim executor per case. Arg loop: 0 = straight-line, 1 = a loop of 64
// trips, 2 = an nd_loop of grid (128,) over the 2-CTA cluster (64 trips on each CTA, each thread
// evaluating its grid index).
void BM_ReferenceLoopSteps(benchmark::State& s) {
  const Case c = reused_barrier_case(64, s.range(0) != 0, s.range(1) != 0, s.range(0) == 2);
  for (auto _ : s) benchmark::DoNotOptimize(predict(c, Profile::kMosaic));
  s.SetItemsProcessed(static_cast<std::int64_t>(s.iterations()));
}
BENCHMARK(BM_ReferenceLoopSteps)->ArgNames({"loop", "tiled"})->ArgsProduct({{0, 1, 2}, {0, 1}});

void BM_SimulatorLoopSteps(benchmark::State& s) {
  const Case c = reused_barrier_case(64, s.range(0) != 0, s.range(1) != 0, s.range(0) == 2);
  sim::Simulator simulator;
  for (auto _ : s) benchmark::DoNotOptimize(simulator.run(c));
  s.SetItemsProcessed(static_cast<std::int64_t>(s.iterations()));
}
BENCHMARK(BM_SimulatorLoopSteps)->ArgNames({"loop", "tiled"})->ArgsProduct({{0, 1, 2}, {0, 1}});

}  // namespace
}  // namespace collfuzz::bench
