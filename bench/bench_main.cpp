// The main of collfuzz's benchmark binaries: Google Benchmark's, with the allocator in the
// report's context (figures on mimalloc and on the system malloc differ by about 40%).
#include <benchmark/benchmark.h>

#include "harness/core/allocator.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("allocator", collfuzz::allocator_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
