# The shared lowering (harness/lowering), the CPU cluster simulator (harness/sim), the `sim`
# executor, and their tests. The mutant variants (same sources, -DCOLLFUZZ_WITH_MUTANTS) are
# linked only by tests; the production libraries carry no mutant hooks.
set(COLLFUZZ_LOWERING_SOURCES
  harness/lowering/async_copy.cpp
  harness/lowering/case_lookup.cpp
  harness/lowering/cluster_geometry.cpp
  harness/lowering/compile_and_launch.cpp
  harness/lowering/dialect_stage.cpp
  harness/lowering/kernel_trace.cpp
  harness/lowering/lowering.cpp
  harness/lowering/lowering_rules.cpp
  harness/lowering/wgmma_vectors.cpp
  harness/lowering/warp_context.cpp
  harness/lowering/mesh_check.cpp
  harness/lowering/module_setup.cpp
  harness/lowering/plan_builder.cpp
  harness/lowering/plan_json.cpp
  harness/lowering/resource_estimate.cpp
  harness/lowering/tiling_inference.cpp
)
set(COLLFUZZ_SIM_SOURCES
  harness/sim/cluster_simulator.cpp
  harness/sim/gmem_inputs.cpp
  harness/sim/simulator.cpp
  harness/sim/tma_transfer.cpp
  harness/sim/vector_store.cpp
)

add_library(collfuzz_lowering STATIC ${COLLFUZZ_LOWERING_SOURCES})
target_link_libraries(collfuzz_lowering PUBLIC collfuzz_core PRIVATE collfuzz_warnings)

add_library(collfuzz_sim STATIC ${COLLFUZZ_SIM_SOURCES})
target_link_libraries(collfuzz_sim PUBLIC collfuzz_lowering PRIVATE collfuzz_warnings)

target_sources(collfuzz_executors PRIVATE harness/executors/sim_executor.cpp)
target_link_libraries(collfuzz_executors PUBLIC "$<IF:${COLLFUZZ_SEAM},collfuzz_sim_mutants,collfuzz_sim>")

if(COLLFUZZ_BUILD_TESTS)
  set(COLLFUZZ_SIM_TEST_LIBS collfuzz_oracles)
  collfuzz_add_gtest(collfuzz_sim_tests
    SOURCES
      tests/sim/async_copy_test.cpp
      tests/sim/cluster_geometry_test.cpp
      tests/sim/corpus_agreement_test.cpp
      tests/sim/layout_test.cpp
      tests/sim/loop_test.cpp
      tests/sim/loop_index_test.cpp
      tests/sim/store_groups_test.cpp
      tests/sim/index_sum_test.cpp
      tests/sim/vector_store_test.cpp
      tests/sim/vector_bitwise_test.cpp
      tests/sim/vector_shift_test.cpp
      tests/sim/vector_iota_test.cpp
      tests/sim/loop_carry_test.cpp
      tests/sim/nd_loop_test.cpp
      tests/sim/vector_broadcast_test.cpp
      tests/sim/warp_arrival_check_test.cpp
      tests/sim/vector_convert_test.cpp
      tests/sim/cluster_cancel_test.cpp
      tests/sim/lowering_diagnostics_test.cpp
      tests/sim/mbarrier_test.cpp
      tests/sim/plan_test.cpp
      tests/sim/rule_ids_test.cpp
      tests/sim/sim_executor_test.cpp
      tests/sim/simulator_test.cpp
    LIBS collfuzz_runner collfuzz_sim)

  if(COLLFUZZ_MUTANTS)
    # The selection of a mutant, shared by every mutant variant; it carries the define.
    add_library(collfuzz_mutant_seam STATIC harness/core/mutant_selection.cpp)
    target_compile_definitions(collfuzz_mutant_seam PUBLIC COLLFUZZ_WITH_MUTANTS)
    target_link_libraries(collfuzz_mutant_seam PUBLIC collfuzz_core PRIVATE collfuzz_warnings)
    add_library(collfuzz_lowering_mutants STATIC ${COLLFUZZ_LOWERING_SOURCES})
    target_link_libraries(collfuzz_lowering_mutants PUBLIC collfuzz_mutant_seam PRIVATE collfuzz_warnings)
    # The reference with its interpret-profile mutants (docs/bug-finding.md).
    add_library(collfuzz_reference_mutants STATIC ${COLLFUZZ_REFERENCE_SOURCES})
    target_link_libraries(collfuzz_reference_mutants PUBLIC collfuzz_mutant_seam PRIVATE collfuzz_warnings)
    add_library(collfuzz_sim_mutants STATIC ${COLLFUZZ_SIM_SOURCES})
    target_link_libraries(collfuzz_sim_mutants PUBLIC collfuzz_lowering_mutants PRIVATE collfuzz_warnings)
    collfuzz_add_gtest(collfuzz_mutant_tests
      SOURCES tests/sim/mutant_test.cpp tests/reference/interpret_mutant_test.cpp
      LIBS collfuzz_oracles collfuzz_sim_mutants)
    set_target_properties(collfuzz_mutant_tests PROPERTIES COLLFUZZ_MUTANT_SEAM ON)
  endif()

  # The production binary carries no mutant hook.
  add_test(NAME collfuzz_binary_has_no_mutant_hooks
           COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:collfuzz> -P ${CMAKE_SOURCE_DIR}/tests/sim/check_no_mutant_hooks.cmake)
endif()
