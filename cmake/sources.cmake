# Libraries, one per layer: core (case, outcome) <- reference <- oracles <- executors <- cli.
add_library(collfuzz_core STATIC
  harness/core/allocator.cpp
  harness/core/bounded_json_reader.cpp
  harness/core/build_info.cpp
  harness/core/case_json.cpp
  harness/core/case_json_fields.cpp
  harness/core/case_json_writer.cpp
  harness/core/case_parser.cpp
  harness/core/case_parser_copies.cpp
  harness/core/case_parser_fill.cpp
  harness/core/case_parser_program.cpp
  harness/core/case_parser_cluster_cancel.cpp
  harness/core/case_parser_nd_loop.cpp
  harness/core/case_parser_vectors.cpp
  harness/core/case_parser_cluster_ref.cpp
  harness/core/scratch_shapes.cpp
  harness/core/dtype.cpp
  harness/core/element_value.cpp
  harness/core/reduction.cpp
  harness/core/smem_layout.cpp
  harness/core/wgmma_transfer.cpp
  harness/core/vector_arith.cpp
  harness/core/vector_ops.cpp
  harness/core/fill.cpp
  harness/core/jax_random.cpp
  harness/core/memref_text.cpp
  harness/core/index_json.cpp
  harness/core/jax_version.cpp
  harness/core/json_reader.cpp
  harness/core/ndarray.cpp
  harness/core/outcome_json.cpp
  harness/core/pallas_call_dce.cpp
  harness/core/python_bool.cpp
  harness/core/pyrepr.cpp
  harness/core/stage_names.cpp
  harness/core/stored_expectation.cpp
  harness/core/terminal_text.cpp
  harness/core/markup_text.cpp
  harness/core/undefined_behaviour.cpp
  harness/core/mutant_names.cpp
  harness/core/message_regex.cpp
  harness/core/warp_map.cpp
  harness/core/loop_index.cpp
  harness/core/no_complete_search.cpp
)
target_include_directories(collfuzz_core PUBLIC ${CMAKE_SOURCE_DIR})
# The version and git commit, regenerated at every build (cmake/build_info.cmake).
add_custom_target(collfuzz_build_info
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DVERSION=${PROJECT_VERSION}
          -DOUT=${CMAKE_BINARY_DIR}/generated/collfuzz_build_info.h -P ${CMAKE_SOURCE_DIR}/cmake/build_info.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/collfuzz_build_info.h
  COMMENT "collfuzz version and git commit")
add_dependencies(collfuzz_core collfuzz_build_info)
target_include_directories(collfuzz_core PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(collfuzz_core PUBLIC nlohmann_json::nlohmann_json PRIVATE collfuzz_warnings)

# Child processes (below the executors, which start programs, and the campaign, which forks).
add_library(collfuzz_process STATIC
  harness/process/child_process.cpp
  harness/process/log_file.cpp
  harness/process/process_groups.cpp
)
target_include_directories(collfuzz_process PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(collfuzz_process PRIVATE collfuzz_warnings)

set(COLLFUZZ_REFERENCE_SOURCES
  oracles/reference/barrier_rules.cpp
  oracles/reference/cluster_cancel_rules.cpp
  oracles/reference/copy_facts.cpp
  oracles/reference/copy_rules.cpp
  oracles/reference/execution.cpp
  oracles/reference/execution_barriers.cpp
  oracles/reference/execution_cluster_cancel.cpp
  oracles/reference/execution_copies.cpp
  oracles/reference/execution_layout.cpp
  oracles/reference/execution_scopes.cpp
  oracles/reference/execution_stores.cpp
  oracles/reference/execution_vectors.cpp
  oracles/reference/execution_warp_arrivals.cpp
  oracles/reference/layout_inference_rules.cpp
  oracles/reference/vector_rules.cpp
  oracles/reference/execution_store_groups.cpp
  oracles/reference/interleavings.cpp
  oracles/reference/interpret_rules.cpp
  oracles/reference/launch_context_rules.cpp
  oracles/reference/launch_rules.cpp
  oracles/reference/lowering_walk.cpp
  oracles/reference/mesh_facts.cpp
  oracles/reference/mesh_rules.cpp
  oracles/reference/program_walk.cpp
  oracles/reference/reference.cpp
  oracles/reference/resource_rules.cpp
  oracles/reference/rule_fix.cpp
  oracles/reference/rules.cpp
  oracles/reference/scoped_rules.cpp
  oracles/reference/smem_transform_rules.cpp
  oracles/reference/trace_rules.cpp
  oracles/reference/undefined_runs.cpp
  oracles/reference/warp_rules.cpp
)
add_library(collfuzz_reference STATIC ${COLLFUZZ_REFERENCE_SOURCES})
target_link_libraries(collfuzz_reference PUBLIC collfuzz_core PRIVATE collfuzz_warnings)
# A test binary with the property COLLFUZZ_MUTANT_SEAM links, through every library above them,
# the mutant variants (cmake/sim.cmake) of the libraries that carry planted bugs (the reference,
# the simulator and the lowering); every other target links the production ones.
set(COLLFUZZ_SEAM "$<BOOL:$<TARGET_PROPERTY:COLLFUZZ_MUTANT_SEAM>>")

add_library(collfuzz_oracles STATIC
  oracles/byte_oracle.cpp
  oracles/diagnostic_oracle.cpp
  oracles/memory_oracle.cpp
  oracles/op_kinds.cpp
  oracles/undefined_oracle.cpp
  oracles/verdict.cpp
)
target_link_libraries(collfuzz_oracles PUBLIC "$<IF:${COLLFUZZ_SEAM},collfuzz_reference_mutants,collfuzz_reference>"
                                       PRIVATE collfuzz_warnings)

add_library(collfuzz_executors STATIC
  harness/executors/external_executor.cpp
  harness/executors/gpu_presence.cpp
  harness/executors/jax_python.cpp
  harness/executors/reference_executor.cpp
  harness/executors/registry.cpp
)
target_link_libraries(collfuzz_executors PUBLIC collfuzz_oracles collfuzz_process PRIVATE collfuzz_warnings)
target_compile_definitions(collfuzz_executors PRIVATE COLLFUZZ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

add_library(collfuzz_runner STATIC
  harness/runner/atomic_file.cpp
  harness/runner/baseline.cpp
  harness/runner/baseline_lookup.cpp
  harness/runner/known_jax_bugs.cpp
  harness/runner/barrier_imbalance.cpp
  harness/runner/case_runner.cpp
  harness/runner/element_values.cpp
  harness/runner/outcome_text.cpp
  harness/runner/profile_acceptance.cpp
  harness/runner/freeze.cpp
  harness/runner/replay.cpp
  harness/runner/repro_script.cpp
  harness/runner/kernel_import.cpp
)
target_link_libraries(collfuzz_runner PUBLIC collfuzz_executors PRIVATE collfuzz_warnings)
target_compile_definitions(collfuzz_runner PRIVATE COLLFUZZ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

add_executable(collfuzz
  harness/cli/cmd_common.cpp
  harness/cli/cmd_explain.cpp
  harness/cli/cmd_import.cpp
  harness/cli/cmd_freeze.cpp
  harness/cli/cmd_replay.cpp
  harness/cli/cmd_repro.cpp
  harness/cli/cmd_rules.cpp
  harness/cli/cmd_run.cpp
  harness/cli/flag_range.cpp
  harness/cli/flags.cpp
  harness/cli/main.cpp
  harness/cli/stdin_case.cpp
)
target_link_libraries(collfuzz PRIVATE collfuzz_runner CLI11::CLI11 collfuzz_warnings)
if(COLLFUZZ_STATIC)
  target_link_options(collfuzz PRIVATE -static)
endif()
