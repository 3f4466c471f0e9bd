# A case's scratch_shapes (docs/case-format.md): bad input names its path in the file, never the
# run_scoped it is read as; a bad op of a case with scratch_shapes keeps its $.program path. Run by
# ctest (cli_scratch_shapes); takes under a second.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_scratch_shapes")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

set(head "{\"format\": 1, \"name\": \"s\", \"mesh\": {\"cluster\": [2], \"cluster_names\": [\"x\"]}, \"target\": {\"arch\": \"sm_90a\"}, \"inputs\": [{\"name\": \"src\", \"shape\": [64], \"dtype\": \"float32\"}]")
file(WRITE "${dir}/not_array.json" "${head}, \"scratch_shapes\": {\"name\": \"buf\"}, \"program\": []}")
expect_exit(2 "not_array.json:$.scratch_shapes: expected an array of allocations" ${COLLFUZZ} run "${dir}/not_array.json")
file(WRITE "${dir}/bad_kind.json" "${head}, \"scratch_shapes\": [{\"name\": \"buf\", \"kind\": \"smem\", \"shape\": [64], \"dtype\": \"float32\"}, {\"name\": \"bar\", \"kind\": \"nope\"}], \"program\": []}")
expect_exit(2 "bad_kind.json:$.scratch_shapes[1].kind" ${COLLFUZZ} run "${dir}/bad_kind.json")
file(WRITE "${dir}/bad_op.json" "${head}, \"scratch_shapes\": [{\"name\": \"bar\", \"kind\": \"barrier\"}], \"program\": [{\"op\": \"barrier_wait\", \"barrier\": {\"alloc\": \"bar\"}}, {\"op\": \"barrier_wait\", \"barrier\": {\"alloc\": \"nosuch\"}}]}")
expect_exit(2 "bad_op.json:$.program[1].barrier.alloc" ${COLLFUZZ} run "${dir}/bad_op.json")
# A name of scratch_shapes is a name of the case: an input of the same name is refused.
file(WRITE "${dir}/dup.json" "${head}, \"scratch_shapes\": [{\"name\": \"src\", \"kind\": \"barrier\"}], \"program\": []}")
expect_exit(2 "dup.json:$.scratch_shapes[0].name" ${COLLFUZZ} run "${dir}/dup.json")
# A good one runs: the shared barrier of two threads completes.
expect_exit(0 "completes" ${COLLFUZZ} run "${SOURCE_DIR}/corpus/scratch_shapes.kernel__thread_collective_shared_barrier.json")
# The generators write a share of their cases with scratch_shapes (generators/case_gen.cpp); the
# first of them parses and runs on the reference.
execute_process(COMMAND ${COLLFUZZ} gen --count 400 --seed 7 OUTPUT_VARIABLE gen RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "collfuzz gen failed: ${rc}")
endif()
string(REPLACE "\n" ";" lines "${gen}")
set(with 0)
foreach(line IN LISTS lines)
  string(FIND "${line}" "\"scratch_shapes\"" at)
  if(NOT at EQUAL -1)
    math(EXPR with "${with} + 1")
    if(with EQUAL 1)
      file(WRITE "${dir}/generated.json" "${line}")
      expect_exit(0 "" ${COLLFUZZ} run "${dir}/generated.json" --json)
    endif()
  endif()
endforeach()
if(with LESS 20)
  message(FATAL_ERROR "only ${with} of 400 generated cases use scratch_shapes")
endif()
message(STATUS "${with} of 400 generated cases use scratch_shapes")
