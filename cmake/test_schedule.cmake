# When and where the slow script tests run (ci/test, docs/performance.md, "The test command").
#
# COST: ctest starts the tests of higher cost first. A fresh clone has no CTestCostData.txt, so
# without it these tests (defined last, 20 to 60 s each under ASan) started last and ran alone
# at the end of a ctest on two cores.
#
# LABELS run-sanitized: tests whose time is mostly waiting (timeouts, sleeps, child processes and
# JAX's Python), about as long in both builds. ci/test runs them once, in the sanitized build's
# ctest, where they check more; its release ctest leaves them out (-LE 'slow|run-sanitized').
# `ctest --preset release` alone still runs them. (collfuzz_merge is not one: it needs the
# mutant binary, which ci/test's sanitized build leaves out.)
if(NOT COLLFUZZ_BUILD_TESTS)
  return()
endif()
set(collfuzz_costly_tests
  collfuzz_merge collfuzz_fuzz_parser_regression collfuzz_fuzz_case_regression
  collfuzz_campaign_faults collfuzz_shard_union collfuzz_slow_pool_stall collfuzz_flaky_finding
  collfuzz_slow_pool_turns collfuzz_campaign_survives_sigkill cli_fuzz_jax cli_values
  collfuzz_campaign_repro_run import_roundtrip cli_import collfuzz_report_browser case_schema)
set(collfuzz_run_sanitized_tests
  collfuzz_campaign_faults collfuzz_slow_pool_stall collfuzz_flaky_finding
  collfuzz_slow_pool_turns collfuzz_campaign_survives_sigkill cli_fuzz_jax)
# A name that is no test in this build is a typo, unless its test is one that only some builds
# define: collfuzz_merge and collfuzz_report_browser need the mutant variants (COLLFUZZ_MUTANTS,
# off in ci/test's sanitized build); import_roundtrip, case_schema and collfuzz_campaign_repro_run
# run in non-Debug builds only.
set(collfuzz_conditional_tests collfuzz_merge collfuzz_report_browser import_roundtrip case_schema
    collfuzz_campaign_repro_run)
foreach(t IN LISTS collfuzz_costly_tests collfuzz_run_sanitized_tests)
  if(NOT TEST ${t} AND NOT t IN_LIST collfuzz_conditional_tests)
    message(FATAL_ERROR "cmake/test_schedule.cmake names ${t}, which is no test of this build")
  endif()
endforeach()
foreach(t IN LISTS collfuzz_costly_tests)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES COST 60)
  endif()
endforeach()
foreach(t IN LISTS collfuzz_run_sanitized_tests)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY LABELS run-sanitized)
  endif()
endforeach()
