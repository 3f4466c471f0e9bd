# Generators (RapidCheck), the fuzzing campaign, `collfuzz gen` and `collfuzz fuzz`, their tests,
# the libFuzzer targets and their regression binaries.
find_package(rapidcheck REQUIRED)

add_library(collfuzz_generators STATIC
  generators/axis_choice.cpp
  generators/axis_environment.cpp
  generators/case_gen.cpp
  generators/case_stream.cpp
  generators/clean_plan.cpp
  generators/cluster_cancel_gen.cpp
  generators/cond_choice.cpp
  generators/copy_gen.cpp
  generators/mesh_gen.cpp
  generators/nd_loop_shape.cpp
  generators/program_builder.cpp
  generators/rule_coverage.cpp
  generators/scope_gen.cpp
  generators/shape_choice.cpp
  generators/smem_shape.cpp
  generators/smem_transpose.cpp
  generators/target_gen.cpp
  generators/vector_back.cpp
  generators/write_back_ops.cpp
)
target_link_libraries(collfuzz_generators
  PUBLIC "$<IF:${COLLFUZZ_SEAM},collfuzz_reference_mutants,collfuzz_reference>" rapidcheck
  PRIVATE collfuzz_warnings)

target_sources(collfuzz PRIVATE harness/cli/cmd_gen.cpp harness/cli/cmd_fuzz.cpp)
target_link_libraries(collfuzz PRIVATE collfuzz_generators)

add_library(collfuzz_campaign STATIC
  harness/campaign/campaign.cpp
  harness/campaign/campaign_lock.cpp
  harness/campaign/campaign_options.cpp
  harness/campaign/finding_repro.cpp
  harness/campaign/finding_repro_run.cpp
  harness/campaign/campaign_state.cpp
  harness/campaign/campaign_summary.cpp
  harness/campaign/case_check.cpp
  harness/campaign/root_cause.cpp
  harness/campaign/undefined_behaviour.cpp
  harness/campaign/case_shrinker.cpp
  harness/campaign/confirmation.cpp
  harness/campaign/crash_report.cpp
  harness/campaign/executor_releases.cpp
  harness/campaign/finding_report.cpp
  harness/campaign/findings_store.cpp
  harness/campaign/isolated_loop.cpp
  harness/campaign/progress_display.cpp
  harness/campaign/slow_pool.cpp
  harness/campaign/slow_worker.cpp
  harness/campaign/shard.cpp
  harness/campaign/timeline.cpp
  harness/campaign/worker.cpp
)
target_link_libraries(collfuzz_campaign PUBLIC collfuzz_generators collfuzz_runner PRIVATE collfuzz_warnings)
target_link_libraries(collfuzz PRIVATE collfuzz_campaign)

if(COLLFUZZ_BUILD_TESTS)
  collfuzz_add_gtest(collfuzz_generator_tests
    SOURCES tests/generators/generator_test.cpp tests/generators/campaign_test.cpp
            tests/generators/fuzz_jax_test.cpp
    LIBS collfuzz_campaign)
  collfuzz_add_gtest(collfuzz_slow_pool_tests
    SOURCES tests/generators/slow_sampling_test.cpp tests/generators/slow_pool_test.cpp
            tests/generators/signature_rule_test.cpp tests/generators/root_cause_test.cpp
            tests/generators/health_rules_test.cpp tests/generators/finding_repro_test.cpp
    LIBS collfuzz_campaign)
  # sweep: 100,000 cases x 2 profiles x 2 JAX releases; 10 s in the release build, 7 minutes
  # under ASan, where it adds nothing the release run does not check (ci/test runs it once).
  collfuzz_add_gtest(collfuzz_rule_coverage_tests
    SOURCES tests/generators/rule_coverage_test.cpp
    LIBS collfuzz_campaign
    LABELS sweep)
  add_test(NAME collfuzz_slow_pool_stall
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/slow_pool_stall_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  add_test(NAME collfuzz_slow_pool_death
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/slow_pool_death_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  add_test(NAME collfuzz_slow_pool_turns
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/slow_pool_turns_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  add_test(NAME collfuzz_flaky_finding
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/flaky_finding_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  add_test(NAME collfuzz_campaign_baseline
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/campaign_baseline_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  # Each finding's script run once by the campaign (issue 27); skipped (77) without .venv-jax.
  # Release build only: 97 s, most of it Python writing and running the scripts.
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    add_test(NAME collfuzz_campaign_repro_run
             COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/campaign_repro_run_test.sh
                     $<TARGET_FILE:collfuzz> ${CMAKE_SOURCE_DIR})
    set_tests_properties(collfuzz_campaign_repro_run PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endif()
  add_test(NAME collfuzz_campaign_survives_sigkill
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/generators/campaign_kill_test.sh $<TARGET_FILE:collfuzz>)
  collfuzz_add_gtest(collfuzz_property_tests
    SOURCES tests/generators/property_test.cpp tests/generators/property_support.cpp
    LIBS collfuzz_campaign rapidcheck_gtest)
endif()

# The libFuzzer targets. The normal build makes each a plain regression binary (the target run
# over files); ctest runs them over corpus/, the seeds and tests/fuzz/regressions/ (every crash
# input a libFuzzer run found). The fuzz preset (clang, COLLFUZZ_FUZZ=ON) links
# them with libFuzzer, ASan and UBSan.
add_library(collfuzz_case_decoder STATIC tests/fuzz/case_decoder.cpp)
target_link_libraries(collfuzz_case_decoder PUBLIC collfuzz_generators PRIVATE collfuzz_warnings)
set(COLLFUZZ_FUZZ_TARGETS case parser)
set(COLLFUZZ_FUZZ_LIBS_case collfuzz_case_decoder collfuzz_runner)
set(COLLFUZZ_FUZZ_LIBS_parser collfuzz_core)
foreach(t IN LISTS COLLFUZZ_FUZZ_TARGETS)
  add_executable(collfuzz_fuzz_${t}_regression tests/fuzz/${t}_fuzz_target.cpp tests/fuzz/regression_main.cpp)
  target_link_libraries(collfuzz_fuzz_${t}_regression PRIVATE ${COLLFUZZ_FUZZ_LIBS_${t}} collfuzz_warnings)
  if(COLLFUZZ_BUILD_TESTS)
    add_test(NAME collfuzz_fuzz_${t}_regression
             COMMAND collfuzz_fuzz_${t}_regression ${CMAKE_SOURCE_DIR}/corpus ${CMAKE_SOURCE_DIR}/tests/fuzz/seeds
                     ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions ${CMAKE_SOURCE_DIR}/tests/generators/found
             WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  endif()
  if(COLLFUZZ_FUZZ)
    add_executable(collfuzz_fuzz_${t} tests/fuzz/${t}_fuzz_target.cpp)
    target_link_libraries(collfuzz_fuzz_${t} PRIVATE ${COLLFUZZ_FUZZ_LIBS_${t}} collfuzz_warnings)
    target_compile_options(collfuzz_fuzz_${t} PRIVATE -fsanitize=fuzzer)
    target_link_options(collfuzz_fuzz_${t} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()
if(COLLFUZZ_FUZZ)
  # Every target is instrumented for coverage and checked by ASan and UBSan; only the fuzz
  # targets link libFuzzer's main().
  get_property(_collfuzz_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(tgt IN LISTS _collfuzz_targets)
    get_target_property(_type ${tgt} TYPE)
    if(_type STREQUAL "STATIC_LIBRARY" OR _type STREQUAL "EXECUTABLE")
      target_compile_options(${tgt} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
      target_link_options(${tgt} PRIVATE -fsanitize=address,undefined)
    endif()
  endforeach()
endif()

# Campaign speed (bench/campaign_bench.cpp): cases/s of the default campaign's loop on one core.
if(COLLFUZZ_BUILD_BENCH AND NOT TARGET collfuzz_campaign_bench)
  find_package(benchmark QUIET)
  if(benchmark_FOUND)
    add_executable(collfuzz_campaign_bench bench/campaign_bench.cpp bench/bench_main.cpp)
    target_link_libraries(collfuzz_campaign_bench PRIVATE collfuzz_campaign benchmark::benchmark collfuzz_warnings)
  endif()
endif()

# Bug-finding power (docs/bug-finding.md): the campaign's loop against each mutant of the
# simulator and the lowering. Test-only: it links the mutant variant of the simulator, never the
# production collfuzz binary.
if(COLLFUZZ_MUTANTS AND TARGET collfuzz_sim_mutants)
  # The campaign, its executors and the reference it links are the mutant variants
  # (COLLFUZZ_MUTANT_SEAM, cmake/sources.cmake): --profile interpret hunts the reference's
  # mutants with a real campaign.
  add_executable(collfuzz_bugfind
    harness/campaign/bugfind_main.cpp
    harness/campaign/bug_finding.cpp
    harness/campaign/campaign_hunt.cpp
  )
  set_target_properties(collfuzz_bugfind PROPERTIES COLLFUZZ_MUTANT_SEAM ON)
  target_link_libraries(collfuzz_bugfind PRIVATE collfuzz_campaign CLI11::CLI11 collfuzz_warnings)
endif()

# Campaign faults and process hygiene (issue 10): kill -9 of the supervisor or of a worker,
# SIGHUP, the lock on --out, a full disk.
if(COLLFUZZ_BUILD_TESTS)
  add_test(NAME collfuzz_campaign_faults
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/process/campaign_faults_test.sh $<TARGET_FILE:collfuzz>
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(collfuzz_campaign_faults PROPERTIES TIMEOUT 600)
  collfuzz_add_gtest(collfuzz_campaign_hang_tests
    SOURCES tests/process/campaign_hang_test.cpp
    LIBS collfuzz_campaign)
endif()
