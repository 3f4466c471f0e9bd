# Tests of the core, the reference checker, the oracles and the CLI.
collfuzz_add_gtest(collfuzz_core_tests
  SOURCES tests/core/case_parser_test.cpp tests/core/fill_test.cpp tests/core/outcome_json_test.cpp
          tests/core/fill_values_test.cpp tests/core/reduction_test.cpp
          tests/core/allocator_test.cpp tests/core/terminal_text_test.cpp
          tests/core/markup_text_test.cpp
          tests/core/bounded_json_reader_test.cpp tests/core/case_format_extensions_test.cpp
          tests/core/warp_map_test.cpp tests/core/smem_layout_test.cpp
          tests/core/pallas_call_dce_test.cpp
          tests/core/smem_transform_format_test.cpp tests/core/jax_random_test.cpp
          tests/core/memref_text_test.cpp tests/core/wgmma_transfer_test.cpp
  LIBS collfuzz_core)

# Hostile input: every number of every stored case mutated (0, -1, 2^64, 1e400) and taken the way
# `collfuzz run` takes it (reader, parser, reference, simulator, oracles): refused or run, never a
# signal (tests/core/hostile_input_test.cpp).
collfuzz_add_gtest(collfuzz_hostile_input_tests
  SOURCES tests/core/hostile_input_test.cpp
  LIBS collfuzz_runner)

collfuzz_add_gtest(collfuzz_explain_support_tests
  SOURCES tests/runner/explain_support_test.cpp tests/runner/stored_regex_test.cpp
          tests/runner/baseline_lookup_test.cpp tests/runner/known_jax_bugs_test.cpp
          tests/runner/parallel_replay_test.cpp
  LIBS collfuzz_runner)

collfuzz_add_gtest(collfuzz_reference_tests
  SOURCES tests/reference/accounting_test.cpp tests/reference/lowering_rules_test.cpp
          tests/reference/mesh_and_trace_rules_test.cpp tests/reference/rule_table_test.cpp
          tests/reference/rule_fix_test.cpp
          tests/reference/corpus_coverage_test.cpp tests/reference/jax_version_test.cpp
          tests/reference/undefined_behaviour_test.cpp tests/reference/smem_race_test.cpp
          tests/reference/interleavings_test.cpp tests/reference/store_options_test.cpp
  LIBS collfuzz_reference)
target_link_libraries(collfuzz_reference_tests PRIVATE collfuzz_core collfuzz_oracles)

# The corpus replayed by the CLI, as a user runs it: every stored expectation holds.
add_test(NAME corpus_replay_reference COMMAND collfuzz replay corpus/ --executors reference
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
# corpus-slow/: cases whose JAX runs take tens of seconds (ci/nightly-jax-versions replays them on
# JAX); the reference and the simulator here.
add_test(NAME corpus_slow_replay_reference COMMAND collfuzz replay corpus-slow/ --executors reference,sim
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
# jax-ir (docs/ir-executor.md) on each modelled JAX release: planted edits of the lowered module
# flagged by the oracles, unknown ops named, 0.12.0.1's predicate=False deadlock. Skipped (77)
# without the release's venv.
# Release build only: the evaluator is Python (85 s of the two releases' runs), and the test
# command replays the corpus on jax-ir with the release binary anyway.
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
foreach(_venv IN ITEMS .venv-jax .venv-jax-0.12.0.1)
  add_test(NAME jax_ir${_venv} COMMAND bash ${CMAKE_SOURCE_DIR}/tests/jax/run_ir_tests.sh
                                       $<TARGET_FILE:collfuzz> ${_venv})
  set_tests_properties(jax_ir${_venv} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
endif()
# Bad input gets exit code 2 and a message naming the JSON path, never a crash.
add_test(NAME cli_bad_case_exit_code
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/bad_input.cmake)

# collfuzz repro from the command line (docs/python.md).
add_test(NAME cli_repro
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/repro_cli_test.cmake)

# collfuzz import (docs/python.md, "Python in"): its error paths, and repro-then-import giving back
# every corpus case but the known ones (tools/import_roundtrip_known.json). Skipped (77) without
# .venv-jax.
add_test(NAME cli_import
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/import_cli_test.cmake)
add_test(NAME cli_scratch_shapes
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/scratch_shapes_test.cmake)
add_test(NAME cli_freeze
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/freeze_test.cmake)
# The two below check the Python side (the CLI is cli_import's): the release build only, so that
# ci/test does not spend their time again under the sanitizers.
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
add_test(NAME import_roundtrip
         COMMAND bash -c "test -x .venv-jax/bin/python || exit 77; python3 tools/import_roundtrip.py --collfuzz $<TARGET_FILE:collfuzz> --expect-failures tools/import_roundtrip_known.json corpus/"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(import_roundtrip PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# JAX's tests through import (corpus/jax-tests/py/): each equal to its hand translation in canonical
# form, and held by reference and sim against the test's outcome. Not jax-interpret here: the
# corpus replay of ci/test runs every hand translation on it (and jax-lower, jax-ir), both
# releases, and the interpret-mode replay of the equal imported copies took 100 s a release.
add_test(NAME jax_tests_import
         COMMAND bash -c "test -x .venv-jax/bin/python || exit 77; python3 tools/jax_tests_import.py --collfuzz $<TARGET_FILE:collfuzz> --executors reference,sim"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(jax_tests_import PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# The same on JAX 0.12.0.1 (import traced through jax.extend.core there: 0.12.0.1 has no
# jax._src.core.ClosedJaxpr, issue 27).
add_test(NAME jax_tests_import_0.12.0.1
         COMMAND bash -c "test -x .venv-jax-0.12.0.1/bin/python || exit 77; python3 tools/jax_tests_import.py --collfuzz $<TARGET_FILE:collfuzz> --python .venv-jax-0.12.0.1/bin/python --executors reference,sim --work ${CMAKE_BINARY_DIR}/jax-tests-import-0.12.0.1"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(jax_tests_import_0.12.0.1 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# The case schema (schema/case.schema.json) holds every corpus case and 400 generated ones, so
# that it stays the format's machine-readable form as constructs land.
add_test(NAME case_schema
         COMMAND bash -c "test -x .venv-validate/bin/python || exit 77; .venv-validate/bin/python tools/validate_case_schema.py corpus corpus-slow corpus-jax-probes && $<TARGET_FILE:collfuzz> gen --count 400 --seed 7 | .venv-validate/bin/python tools/validate_case_schema.py -"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(case_schema PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# Kernels as engineers write them (corpus/kernels/py/): the same check, on both JAX releases,
# replayed on reference, sim and jax-interpret against the hand-derived expectations.
foreach(release IN ITEMS 0.11.2 0.12.0.1)
  if(release STREQUAL "0.11.2")
    set(kernels_py .venv-jax/bin/python)
  else()
    set(kernels_py .venv-jax-${release}/bin/python)
  endif()
  add_test(NAME kernels_import_${release}
           COMMAND bash -c "test -x ${kernels_py} || exit 77; python3 tools/jax_tests_import.py --dir corpus/kernels --collfuzz $<TARGET_FILE:collfuzz> --python ${kernels_py} --work ${CMAKE_BINARY_DIR}/kernels-import-${release}"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(kernels_import_${release} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
endif()

# The layout's rules (tools/layout_check.py): no source file over 800 lines, no include or import
# cycle (C++ quoted includes; Python imports, lazy ones too). Release build only: it reads sources.
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
add_test(NAME layout_check
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tools/layout_check.py ${CMAKE_SOURCE_DIR})
endif()

# Process hygiene and the external executor protocol's failures (issue 10).
collfuzz_add_gtest(collfuzz_process_tests
  SOURCES tests/process/child_process_test.cpp tests/process/external_executor_test.cpp
  LIBS collfuzz_executors)

# Bad CLI values (exit 2, flag and range named), "nothing compared" (exit 1), terminal escaping
# and the CLI papercuts of issue 10.
add_test(NAME cli_values
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/cli_values_test.cmake)

# fuzz --jax V: the release is part of the campaign; an executor of another release is named and
# never compared (issue 12).
add_test(NAME cli_fuzz_jax
         COMMAND ${CMAKE_COMMAND} -DCOLLFUZZ=$<TARGET_FILE:collfuzz> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                 -P ${CMAKE_SOURCE_DIR}/tests/cli/fuzz_jax_test.cmake)
