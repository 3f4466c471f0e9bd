# Google Benchmark families (bench/): the reference, the lowering, the simulator, the oracles, end
# to end, and a memcpy floor in the same binary. docs/performance.md gives the command and table.
if(COLLFUZZ_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(benchmark_FOUND)
    add_executable(collfuzz_bench bench/bench_cases.cpp bench/families.cpp bench/bench_main.cpp)
    target_link_libraries(collfuzz_bench PRIVATE collfuzz_oracles collfuzz_sim benchmark::benchmark
                                                 collfuzz_warnings)
  else()
    message(STATUS "Google Benchmark not found: bench/ is not built")
  endif()
endif()
