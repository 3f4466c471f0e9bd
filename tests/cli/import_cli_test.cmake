# collfuzz import from the command line (docs/python.md, docs/cli.md): a missing file, a missing
# function, an unsupported primitive and a loop without a static trip count exit 2 naming the thing
# and its line; a missing Python exits 3; a JAX test's kernel becomes a case. Run by ctest
# (cli_import); takes about 20 s (each import starts Python and JAX).
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_import")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(here "${SOURCE_DIR}/tests/cli/import")
set(good "${SOURCE_DIR}/corpus/jax-tests/py/collective_copy_gmem_to_smem.py")

include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

expect_exit(2 "no such file" ${COLLFUZZ} import "${dir}/nosuch.py")
expect_exit(2 "no such file" ${COLLFUZZ} import "${dir}/nosuch.py:kernel")
expect_exit(2 "--arch" ${COLLFUZZ} import "${good}" --arch sm_75)
expect_exit(3 "no Python at" ${COLLFUZZ} import "${good}" --python "${dir}/no-python")

if(NOT EXISTS "${SOURCE_DIR}/.venv-jax/bin/python")
  message(STATUS "no .venv-jax: the tracing half is not checked")
  return()
endif()
# A function the file does not define: named, with the ones it does.
expect_exit(2 "no function `nosuch`" ${COLLFUZZ} import "${here}/unsupported_store.py:nosuch")
expect_exit(2 "the file defines: collfuzz_case, not_a_case" ${COLLFUZZ} import "${here}/unsupported_store.py:nosuch")
# A function that does not return (kernel, args).
expect_exit(2 "expected (kernel, args) or (kernel, args, fills)" ${COLLFUZZ} import "${here}/unsupported_store.py:not_a_case")
# An unsupported primitive: its name and the user's line, no traceback.
expect_exit(2 "unsupported_store.py:14: a vector store of a value the importer does not follow: it comes from `exp`" ${COLLFUZZ} import "${here}/unsupported_store.py")
string(FIND "${last_output}" "Traceback" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "a Python traceback reached the user:\n${last_output}")
endif()
expect_exit(2 "dynamic_loop.py:14: unsupported primitive `while`" ${COLLFUZZ} import "${here}/dynamic_loop.py")
# A JAX test's kernel: the case on stdout, or in -o.
expect_exit(0 "\"op\": \"copy_gmem_to_smem\"" ${COLLFUZZ} import "${good}")
expect_exit(0 "case written to" ${COLLFUZZ} import "${good}:collfuzz_case" -o "${dir}/case.json" --arch sm_100a)
file(READ "${dir}/case.json" written)
string(FIND "${written}" "\"arch\": \"sm_100a\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the written case does not carry --arch: ${written}")
endif()
# The case it wrote is a case: collfuzz runs it.
expect_exit(0 "completed" ${COLLFUZZ} run "${dir}/case.json")
# scratch_types with a thread axis: a run_scoped collective over it, so both threads share the
# barrier (a non-collective one would be refused) and both waits complete.
expect_exit(0 "case written to" ${COLLFUZZ} import "${here}/scratch_threads.py" -o "${dir}/threads.json")
expect_exit(0 "thread 1 waits on bar[0] phase 0 at $.program[0].body[1]: completes" ${COLLFUZZ} run "${dir}/threads.json")
# A None operand (an absent bias, as JAX's shipped matmuls take): not an input of the case.
expect_exit(0 "case written to" ${COLLFUZZ} import "${here}/none_operand.py" -o "${dir}/none.json")
file(READ "${dir}/none.json" none_case)
string(JSON n_inputs LENGTH "${none_case}" inputs)
string(JSON fill_value GET "${none_case}" inputs 0 fill value)
if(NOT n_inputs EQUAL 1 OR NOT fill_value EQUAL 3)
  message(FATAL_ERROR "a None operand: ${n_inputs} inputs, fill value ${fill_value}: ${none_case}")
endif()
# The JAX engineer's loop: an imported kernel has no expect (replay compares nothing); freeze writes
# the reference's prediction; replay then compares it and passes (docs/cli.md, "collfuzz freeze").
expect_exit(1 "nothing was compared" ${COLLFUZZ} replay "${dir}/none.json")
expect_exit(0 "1 frozen" ${COLLFUZZ} freeze "${dir}/none.json")
expect_exit(0 "2 passed, 0 failed" ${COLLFUZZ} replay "${dir}/none.json" --executors reference,sim)
# Inputs hold what the kernel was called with (issue 27): jnp.arange (0 included, reshaped, a
# negative step) as arange, a constant, jax.random.normal arrays and an arange past float32's fill
# range as explicit values, jax.random.uniform and jax.random.bits draws as the jax_random fill
# that draws them; past 65,536 numbers, iota with a warning saying why. inputs_check.py compares
# every input with the argument byte for byte, through cfjax_fill (the JAX executors) and through
# the reference's prediction after freeze (each input is copied to an output: the C++ fill).
expect_exit(0 "has 70000 elements, more than the 65536" ${COLLFUZZ} import "${here}/inputs.py" -o "${dir}/inputs.json")
configure_file("${dir}/inputs.json" "${dir}/inputs_frozen.json" COPYONLY)
expect_exit(0 "1 frozen" ${COLLFUZZ} freeze "${dir}/inputs_frozen.json")
expect_exit(0 "9 inputs checked, 0 differences" "${SOURCE_DIR}/.venv-jax/bin/python" "${here}/inputs_check.py" "${dir}/inputs.json" "${dir}/inputs_frozen.json")
# The same case through the repro script and back: make_inputs() builds the same arrays.
expect_exit(0 "" ${COLLFUZZ} repro "${dir}/inputs.json" -o "${dir}/inputs_repro.py")
expect_exit(0 "case written to" ${COLLFUZZ} import "${dir}/inputs_repro.py" -o "${dir}/inputs_back.json")
file(READ "${dir}/inputs.json" imported)
file(READ "${dir}/inputs_back.json" back)
string(JSON imported_inputs GET "${imported}" inputs)
string(JSON back_inputs GET "${back}" inputs)
string(JSON same EQUAL "${imported_inputs}" "${back_inputs}")
if(NOT same)
  message(FATAL_ERROR "the repro script's inputs import differently:\n${imported_inputs}\n${back_inputs}")
endif()
