# collfuzz repro from the command line (docs/python.md): bad input exits 2 naming what is wrong, a
# missing Python exits 3, and a case becomes a script (and a directory, scripts with an index).
# Run by ctest (cli_repro); takes a few seconds.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_repro")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(case "${SOURCE_DIR}/corpus/interpret.scoped.thread_axis_required__empty_axes_R2.json")

include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

expect_exit(2 "--mode" ${COLLFUZZ} repro "${case}" --mode tpu)
expect_exit(2 "-o" ${COLLFUZZ} repro "${SOURCE_DIR}/corpus")
expect_exit(3 "no Python at" ${COLLFUZZ} repro "${case}" --python "${dir}/no-python")

if(NOT EXISTS "${SOURCE_DIR}/.venv-jax/bin/python")
  message(STATUS "no .venv-jax: the generating half is not checked")
  return()
endif()
# One case: the script on stdout, naming the exception, the rule's fix and the JAX release.
expect_exit(0 "EXPECTED_EXCEPTION = 'ValueError'" ${COLLFUZZ} repro "${case}")
expect_exit(0 "How to fix the kernel: add the thread axis to collective_axes" ${COLLFUZZ} repro "${case}")
expect_exit(0 "Targets JAX 0.12.0.1" ${COLLFUZZ} repro "${case}" --jax 0.12.0.1)
expect_exit(0 "lowering_platforms=('cuda',)" ${COLLFUZZ} repro "${case}" --mode lower)
# Several cases: one script each, and index.json mapping each case file to its script.
set(other "${SOURCE_DIR}/corpus/interpret.mode.plain__cluster2.json")
expect_exit(0 "2 script(s) written" ${COLLFUZZ} repro "${case}" "${other}" -o "${dir}/out")
file(READ "${dir}/out/index.json" index)
string(FIND "${index}" "\"script\": \"interpret.mode.plain__cluster2.py\"" at)
if(at EQUAL -1 OR NOT EXISTS "${dir}/out/interpret.mode.plain__cluster2.py")
  message(FATAL_ERROR "index.json does not map the case to its script: ${index}")
endif()
# Several cases, one of them unreadable: it is named and skipped, the others are still written,
# index.json records why, and the exit is 2.
file(WRITE "${dir}/broken.json" "{\"format\": 1, \"name\": \"broken\", \"mesh\": 5}\n")
expect_exit(2 "broken.json:$.mesh: expected an object" ${COLLFUZZ} repro "${case}" "${dir}/broken.json"
            "${other}" -o "${dir}/out-broken")
expect_exit(2 "2 script(s) written, 1 case file(s) unreadable" ${COLLFUZZ} repro "${case}"
            "${dir}/broken.json" "${other}" -o "${dir}/out-broken")
file(READ "${dir}/out-broken/index.json" index)
string(FIND "${index}" "\"unreadable\": " at)
if(at EQUAL -1 OR NOT EXISTS "${dir}/out-broken/interpret.mode.plain__cluster2.py")
  message(FATAL_ERROR "an unreadable case stopped the others, or index.json misses it: ${index}")
endif()
