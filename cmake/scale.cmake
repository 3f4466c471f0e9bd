# Scale-out (docs/scale-out.md): sharding tests, `collfuzz merge`, `collfuzz report`, and the
# engine files' validation.
if(COLLFUZZ_BUILD_TESTS)
  collfuzz_add_gtest(collfuzz_shard_tests SOURCES tests/scale/shard_test.cpp LIBS collfuzz_campaign)
  add_test(NAME collfuzz_shard_union
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/shard_union_test.sh $<TARGET_FILE:collfuzz>)
endif()

# harness/report: above campaign, below cli.
add_library(collfuzz_report STATIC
  harness/report/html_report.cpp
  harness/report/merge.cpp
  harness/report/run_reader.cpp
  harness/report/svg_chart.cpp
)
target_link_libraries(collfuzz_report PUBLIC collfuzz_campaign PRIVATE collfuzz_warnings)
target_sources(collfuzz PRIVATE harness/cli/cmd_merge.cpp harness/cli/cmd_report.cpp)
target_link_libraries(collfuzz PRIVATE collfuzz_report)
if(COLLFUZZ_BUILD_TESTS)
  collfuzz_add_gtest(collfuzz_svg_chart_tests SOURCES tests/scale/svg_chart_test.cpp
                     LIBS collfuzz_report)
endif()

# The shard-union test with findings: the campaign's workers against a mutant simulator.
if(COLLFUZZ_BUILD_TESTS AND COLLFUZZ_MUTANTS AND TARGET collfuzz_sim_mutants)
  # The campaign and everything below it are the mutant variants (COLLFUZZ_MUTANT_SEAM,
  # cmake/sources.cmake), as for collfuzz_bugfind: no campaign source is compiled twice.
  add_executable(collfuzz_shard_mutant tests/scale/shard_mutant_main.cpp)
  set_target_properties(collfuzz_shard_mutant PROPERTIES COLLFUZZ_MUTANT_SEAM ON)
  target_link_libraries(collfuzz_shard_mutant PRIVATE collfuzz_campaign collfuzz_warnings)
  add_test(NAME collfuzz_shard_union_findings
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/shard_mutant_union_test.sh
                   $<TARGET_FILE:collfuzz_shard_mutant>)
  # Known JAX bugs: a planted bug listed for its executor is known, not a finding.
  add_test(NAME collfuzz_known_bugs
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/known_bugs_test.sh
                   $<TARGET_FILE:collfuzz_shard_mutant>)
  add_test(NAME collfuzz_merge
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/merge_test.sh $<TARGET_FILE:collfuzz>
                   $<TARGET_FILE:collfuzz_shard_mutant>)
  # The report in headless Chromium; skipped (not passed) where Chromium is not installed.
  add_test(NAME collfuzz_report_browser
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/report_browser_test.sh
                   $<TARGET_FILE:collfuzz> $<TARGET_FILE:collfuzz_shard_mutant>)
  set_tests_properties(collfuzz_report_browser PROPERTIES SKIP_RETURN_CODE 77)
endif()

if(COLLFUZZ_BUILD_TESTS)
  # The engine files (.github, .gitlab-ci.yml, ci/engines, .clusterfuzzlite) validated offline;
  # skipped where ci/setup-validators.sh has not made .venv-validate.
  add_test(NAME collfuzz_engine_files
           COMMAND bash ${CMAKE_SOURCE_DIR}/ci/validate-engines $<TARGET_FILE:collfuzz>)
  set_tests_properties(collfuzz_engine_files PROPERTIES SKIP_RETURN_CODE 77)
  # .clusterfuzzlite/build.sh under ClusterFuzzLite's variables: a sanitized build, minutes.
  add_test(NAME collfuzz_clusterfuzzlite_build
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scale/clusterfuzzlite_build_test.sh
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(collfuzz_clusterfuzzlite_build PROPERTIES LABELS slow
                       SKIP_RETURN_CODE 77 TIMEOUT 3600)
endif()

# The libFuzzer targets as a fuzzing engine builds them (.clusterfuzzlite/build.sh): the engine's
# flags come in CMAKE_CXX_FLAGS and its engine library in COLLFUZZ_LIB_FUZZING_ENGINE.
set(COLLFUZZ_LIB_FUZZING_ENGINE "" CACHE STRING
    "link the fuzz targets with this fuzzing engine (ClusterFuzzLite's $LIB_FUZZING_ENGINE)")
if(COLLFUZZ_LIB_FUZZING_ENGINE)
  foreach(t IN LISTS COLLFUZZ_FUZZ_TARGETS)
    add_executable(collfuzz_engine_fuzz_${t} tests/fuzz/${t}_fuzz_target.cpp)
    target_link_libraries(collfuzz_engine_fuzz_${t} PRIVATE ${COLLFUZZ_FUZZ_LIBS_${t}} collfuzz_warnings)
    separate_arguments(_engine UNIX_COMMAND "${COLLFUZZ_LIB_FUZZING_ENGINE}")
    target_link_options(collfuzz_engine_fuzz_${t} PRIVATE ${_engine})
  endforeach()
endif()
