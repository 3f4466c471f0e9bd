# collfuzz's exit codes on bad input: 2, with a message naming the JSON path.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_bad_input")
file(MAKE_DIRECTORY "${dir}")

function(expect_exit code stderr_fragment)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL ${code})
    message(FATAL_ERROR "expected exit ${code}, got ${rc} from ${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${out}${err}" "${stderr_fragment}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${stderr_fragment}' in the output of ${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
endfunction()

file(WRITE "${dir}/truncated.json" "{\"format\": 1, \"name\": ")
expect_exit(2 "malformed JSON" ${COLLFUZZ} run "${dir}/truncated.json")

file(WRITE "${dir}/unknown_field.json"
  "{\"format\":1,\"name\":\"u\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"program\":[{\"op\":\"barrier_wait\",\"barier\":{}}]}")
expect_exit(2 "$.program[0].barier" ${COLLFUZZ} run "${dir}/unknown_field.json")

file(WRITE "${dir}/huge.json"
  "{\"format\":1,\"name\":\"h\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"inputs\":[{\"name\":\"x\",\"shape\":[2147483647,2147483647],\"dtype\":\"float32\"}],\"program\":[]}")
expect_exit(2 "$.inputs[0].shape" ${COLLFUZZ} run "${dir}/huge.json")

expect_exit(2 "no such file" ${COLLFUZZ} replay "${dir}/does-not-exist")
expect_exit(2 "--executors" ${COLLFUZZ} run --executors nosuch "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json")
expect_exit(2 "" ${COLLFUZZ} run --no-such-flag)
# A replay with a bad case in it still reports the others, and exits 2.
file(COPY "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json" DESTINATION "${dir}/mixed")
file(COPY "${dir}/truncated.json" DESTINATION "${dir}/mixed")
expect_exit(2 "1 passed, 1 failed" ${COLLFUZZ} replay "${dir}/mixed")
