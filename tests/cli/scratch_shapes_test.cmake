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
