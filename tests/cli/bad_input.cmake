# collfuzz's exit codes on bad input: 2, with a message naming the JSON path.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_bad_input")
file(MAKE_DIRECTORY "${dir}")

include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

file(WRITE "${dir}/truncated.json" "{\"format\": 1, \"name\": ")
expect_exit(2 "malformed JSON" ${COLLFUZZ} run "${dir}/truncated.json")

file(WRITE "${dir}/unknown_field.json"
  "{\"format\":1,\"name\":\"u\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"program\":[{\"op\":\"barrier_wait\",\"barier\":{}}]}")
expect_exit(2 "$.program[0].barier" ${COLLFUZZ} run "${dir}/unknown_field.json")

file(WRITE "${dir}/huge.json"
  "{\"format\":1,\"name\":\"h\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"inputs\":[{\"name\":\"x\",\"shape\":[2147483647,2147483647],\"dtype\":\"float32\"}],\"program\":[]}")
expect_exit(2 "$.inputs[0].shape" ${COLLFUZZ} run "${dir}/huge.json")

# A stored expectation's message_regex that does not compile (assertRaisesRegex, case-format.md).
file(WRITE "${dir}/bad_regex.json"
  "{\"format\":1,\"name\":\"r\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"program\":[],\"expect\":{\"kind\":\"rejected\",\"diagnostic\":{\"exception\":\"ValueError\",\"message_regex\":\"(unclosed\"}}}")
expect_exit(2 "bad_regex.json:$.expect.diagnostic.message_regex: invalid regular expression" ${COLLFUZZ} replay "${dir}/bad_regex.json")

expect_exit(2 "no such file" ${COLLFUZZ} replay "${dir}/does-not-exist")
expect_exit(2 "--executors" ${COLLFUZZ} run --executors nosuch "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json")
expect_exit(2 "" ${COLLFUZZ} run --no-such-flag)
# A replay with a bad case in it still reports the others, and exits 2.
file(COPY "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json" DESTINATION "${dir}/mixed")
file(COPY "${dir}/truncated.json" DESTINATION "${dir}/mixed")
expect_exit(2 "1 passed, 1 failed" ${COLLFUZZ} replay "${dir}/mixed")

# Hostile numbers and keys (issue 10): exit 2 naming the file and the JSON path, never a signal.
set(R "${SOURCE_DIR}/tests/fuzz/regressions")
expect_exit(2 "zero-cluster.json:$.mesh.cluster[0]: value 0 is out of range" ${COLLFUZZ} run "${R}/zero-cluster.json")
expect_exit(2 "zero-grid.json:$.mesh.grid[0]" ${COLLFUZZ} run "${R}/zero-grid.json")
expect_exit(2 "zero-num-threads.json:$.mesh.num_threads" ${COLLFUZZ} run "${R}/zero-num-threads.json")
expect_exit(2 "zero-format.json:$.format" ${COLLFUZZ} run "${R}/zero-format.json")
expect_exit(2 "zero-input-dim.json:$.inputs[0].shape[1]" ${COLLFUZZ} run "${R}/zero-input-dim.json")
expect_exit(2 "zero-alloc-dim.json:$.program[0].allocs[0].shape[0]" ${COLLFUZZ} run "${R}/zero-alloc-dim.json")
expect_exit(2 "zero-num-barriers-index-0.json:$.program[0].allocs[1].num_barriers" ${COLLFUZZ} run "${R}/zero-num-barriers-index-0.json")
expect_exit(2 "num-barriers-1-index-1.json:$.program[0].body[0].barrier.index" ${COLLFUZZ} run "${R}/num-barriers-1-index-1.json")
expect_exit(2 "number-1e400.json:$.mesh.cluster[0]: the number 1e400 is out of range" ${COLLFUZZ} run "${R}/number-1e400.json")
expect_exit(2 "number-100000-digits.json:$.mesh.cluster[0]: the number 7777" ${COLLFUZZ} run "${R}/number-100000-digits.json")
expect_exit(2 "number-2-pow-64.json:$.inputs[0].shape[1]: value 1.8446744073709552e+19 is out of range" ${COLLFUZZ} run "${R}/number-2-pow-64.json")
expect_exit(2 "duplicate-key.json:$.mesh.cluster: duplicate key" ${COLLFUZZ} run "${R}/duplicate-key.json")
# Every one of them in a directory with a good case: replay runs the good one, reports each bad
# one, writes its summary and exits 2.
file(COPY "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json" DESTINATION "${dir}/hostile")
file(GLOB hostile_files "${R}/*.json")
file(COPY ${hostile_files} DESTINATION "${dir}/hostile")
list(LENGTH hostile_files n_hostile)
file(REMOVE "${dir}/hostile.xml")
expect_exit(2 " passed, ${n_hostile} failed" ${COLLFUZZ} replay "${dir}/hostile" --executors reference,sim
            --junit "${dir}/hostile.xml")
if(NOT EXISTS "${dir}/hostile.xml")
  message(FATAL_ERROR "replay of ${dir}/hostile wrote no JUnit report")
endif()

# Bad arange and values fills (docs/case-format.md "Fills"): exit 2 naming the field.
function(fill_case file dtype shape fill)
  file(WRITE "${dir}/${file}"
    "{\"format\":1,\"name\":\"f\",\"mesh\":{},\"target\":{\"arch\":\"sm_90a\"},\"inputs\":[{\"name\":\"x\",\"shape\":${shape},\"dtype\":\"${dtype}\",\"fill\":${fill}}],\"program\":[]}")
endfunction()
fill_case(arange_past.json int8 "[200]" "{\"pattern\":\"arange\",\"start\":0,\"step\":1}")
expect_exit(2 "arange_past.json:$.inputs[0].fill.step: the last element (199) is 0 + 199 * 1 = 199, outside [-128, 127]" ${COLLFUZZ} run "${dir}/arange_past.json")
fill_case(arange_start.json float32 "[4]" "{\"pattern\":\"arange\",\"start\":5000}")
expect_exit(2 "$.inputs[0].fill.start: start 5000 is outside [-2047, 2047]" ${COLLFUZZ} run "${dir}/arange_start.json")
fill_case(arange_type.json int32 "[4]" "{\"pattern\":\"arange\",\"step\":\"1\"}")
expect_exit(2 "$.inputs[0].fill.step: expected an integer" ${COLLFUZZ} run "${dir}/arange_type.json")
fill_case(values_type.json float32 "[2]" "{\"pattern\":\"values\",\"values\":[1,true]}")
expect_exit(2 "$.inputs[0].fill.values[1]: expected a number, got a boolean" ${COLLFUZZ} run "${dir}/values_type.json")
fill_case(values_inexact.json float32 "[2]" "{\"pattern\":\"values\",\"values\":[0.1,1]}")
expect_exit(2 "$.inputs[0].fill.values[0]: value 0.1 is not exactly a finite value of float32" ${COLLFUZZ} run "${dir}/values_inexact.json")
fill_case(values_range.json uint8 "[2]" "{\"pattern\":\"values\",\"values\":[1,256]}")
expect_exit(2 "$.inputs[0].fill.values[1]: value 256 is out of range [0, 255]" ${COLLFUZZ} run "${dir}/values_range.json")
fill_case(values_length.json int8 "[2,3]" "{\"pattern\":\"values\",\"values\":[1,2,3]}")
expect_exit(2 "$.inputs[0].fill.values: holds 3 values for an array of 6 elements" ${COLLFUZZ} run "${dir}/values_length.json")
fill_case(values_missing.json int8 "[2]" "{\"pattern\":\"values\"}")
expect_exit(2 "$.inputs[0].fill.values: missing required field" ${COLLFUZZ} run "${dir}/values_missing.json")
fill_case(values_wrong_pattern.json int8 "[2]" "{\"pattern\":\"iota\",\"values\":[1,2]}")
expect_exit(2 "$.inputs[0].fill.values: only a fill of pattern \"values\" has this field" ${COLLFUZZ} run "${dir}/values_wrong_pattern.json")
string(REPEAT "0," 65536 many)
fill_case(values_many.json int8 "[65537]" "{\"pattern\":\"values\",\"values\":[${many}0]}")
expect_exit(2 "$.inputs[0].fill.values: array has 65537 elements; at most 65536 are allowed" ${COLLFUZZ} run "${dir}/values_many.json")
