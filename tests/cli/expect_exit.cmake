# expect_exit(CODE FRAGMENT COMMAND...): runs COMMAND (at most 300 s) and fails the test unless it
# exits CODE with FRAGMENT in its stdout+stderr; `last_output` holds that output afterwards. Shared
# by the CLI tests run with `cmake -P` (cli_bad_input, cli_values, cli_fuzz_jax, cli_repro).
function(expect_exit code fragment)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 300)
  if(NOT rc EQUAL ${code})
    message(FATAL_ERROR "expected exit ${code}, got ${rc} from ${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${out}${err}" "${fragment}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${fragment}' in the output of ${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()
