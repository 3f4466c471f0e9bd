# The CLI's values, "nothing compared", terminal safety and the papercuts of issue 10: each check
# failed before the fix. Every bad value exits 2 naming the flag and its range; a run that
# compared nothing exits 1. Run by ctest (cli_values); takes a few seconds.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_values")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
set(case "${SOURCE_DIR}/corpus/copy.dtype_mismatch__bf16_src_f32_dst.json")

include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

# --- 1. Every value outside its range: exit 2, the flag and the range named. -----------------
# (--cases 1 bounds the campaign should a check ever let a value through.)
set(fuzz ${COLLFUZZ} fuzz --executors sim --cases 1 --out "${dir}/never")
foreach(v 1e12 9.3e9 inf nan -1 -0.5 abc)
  expect_exit(2 "--seconds: " ${fuzz} --seconds "${v}")
endforeach()
expect_exit(2 "31536000" ${fuzz} --seconds 1e12)
foreach(v -1 0 nan inf 1e9 0x10 " 1")
  expect_exit(2 "--timeout: " ${COLLFUZZ} run --timeout "${v}" "${case}")
endforeach()
# An empty value (CMake drops empty arguments: through the shell, and never before a case file,
# which the flag would take instead).
expect_exit(2 "--out: expected a non-empty path" sh -c "'${COLLFUZZ}' fuzz --cases 1 --out ''")
expect_exit(2 "--out: 1 required TEXT:a non-empty path" sh -c "'${COLLFUZZ}' fuzz --cases 1 --out=")
expect_exit(2 "--junit: expected a non-empty path" sh -c "'${COLLFUZZ}' replay '${case}' --junit ''")
expect_exit(2 "--python: expected a non-empty path" sh -c "'${COLLFUZZ}' run '${case}' --python ''")
expect_exit(2 "--seconds: expected a number" sh -c "'${COLLFUZZ}' fuzz --cases 1 --out '${dir}/never' --seconds ''")
expect_exit(2 "--executors: expected" ${COLLFUZZ} run --executors sim,,sim "${case}")
expect_exit(2 "an item is empty" ${COLLFUZZ} run --executors sim, "${case}")
expect_exit(2 "named twice" ${COLLFUZZ} run --executors sim,sim "${case}")
expect_exit(2 "unknown executor" ${COLLFUZZ} run --executors sim,nosuch "${case}")
expect_exit(2 "--seed: expected a whole number 0 to 18446744073709551615" ${COLLFUZZ} gen --seed -1)
expect_exit(2 "--seed: expected 0 to" ${COLLFUZZ} gen --seed 18446744073709551616)
expect_exit(2 "--seed" ${COLLFUZZ} gen --seed 1e3)
expect_exit(2 "--cases: expected 0 to 1000000000000" ${fuzz} --cases 99999999999999999999)
expect_exit(2 "--slow-every: expected" ${fuzz} --slow-every -3)
expect_exit(2 "--jobs: expected 1 to 64" ${fuzz} --jobs 0)
expect_exit(2 "--jobs: expected 1 to 64" ${fuzz} --jobs 65)
expect_exit(2 "--count: expected" ${COLLFUZZ} gen --count -1)
expect_exit(2 "--level: expected verdict, rule or message" ${COLLFUZZ} run --level loose "${case}")
expect_exit(2 "--profile: expected mosaic or interpret" ${COLLFUZZ} run --profile MOSAIC "${case}")
if(EXISTS "${dir}/never")
  message(FATAL_ERROR "a rejected fuzz command created its --out")
endif()
# Values inside the ranges still work.
expect_exit(0 "2 passed, 0 failed" ${COLLFUZZ} replay --timeout 0.5 --executors reference,sim "${case}")

# --- 2. Nothing compared: exit 1 (replay, run, fuzz); --allow-unavailable accepts it. ---------
# The CUDA executor is unavailable here (no GPU, or built without CUDA).
if(NOT EXISTS /dev/nvidia0)
  # A folder of three cases (the whole corpus took 50 s under ASan to say the same).
  file(MAKE_DIRECTORY "${dir}/three")
  foreach(name copy.dtype_mismatch__bf16_src_f32_dst alloc.barrier.num_arrivals__zero
               copy.leader_tracked.cluster_size_2__cluster4)
    file(COPY "${SOURCE_DIR}/corpus/${name}.json" DESTINATION "${dir}/three")
  endforeach()
  expect_exit(1 "nothing was compared" ${COLLFUZZ} replay --executors cuda "${dir}/three")
  expect_exit(1 "0 passed, 0 failed," ${COLLFUZZ} replay --executors cuda "${dir}/three")
  expect_exit(0 "skipped" ${COLLFUZZ} replay --executors cuda --allow-unavailable "${case}")
  expect_exit(1 "nothing was compared" ${COLLFUZZ} run --executors cuda "${case}")
  expect_exit(0 "cuda: unavailable" ${COLLFUZZ} run --executors cuda --allow-unavailable "${case}")
  expect_exit(1 "nothing would be compared" ${COLLFUZZ} fuzz --executors cuda --cases 3 --out "${dir}/nogpu")
  expect_exit(0 "3 cases" ${COLLFUZZ} fuzz --executors cuda --cases 3 --allow-unavailable --out "${dir}/nogpu2")
  # jax-gpu without a GPU: unavailable at once, and no Python is started.
  file(WRITE "${dir}/spy-python" "#!/bin/sh\ntouch '${dir}/python-started'\nexit 1\n")
  file(CHMOD "${dir}/spy-python" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  expect_exit(1 "no GPU on this machine" ${COLLFUZZ} run --executors jax-gpu --python "${dir}/spy-python" "${case}")
  if(EXISTS "${dir}/python-started")
    message(FATAL_ERROR "jax-gpu started its Python on a machine without a GPU")
  endif()
endif()
# A Python without JAX: the JAX executor says unavailable for every case; that is not a pass.
find_program(python3 python3)
if(python3)
  file(WRITE "${dir}/python-without-jax" "#!/bin/sh\nexec '${python3}' -I -S \"$@\"\n")
  file(CHMOD "${dir}/python-without-jax" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  expect_exit(1 "nothing was compared" ${COLLFUZZ} replay --executors jax-interpret
              --python "${dir}/python-without-jax" "${case}")
  # It passes the cheap check at start-up; the campaign finds at its end that it compared nothing.
  expect_exit(1 "nothing was compared" ${COLLFUZZ} fuzz --executors jax-interpret --cases 3
              --python "${dir}/python-without-jax" --out "${dir}/nojax")
endif()
# The reference alone with a stored expectation compares; a case without one does not.
file(READ "${case}" text)
string(JSON noexpect REMOVE "${text}" expect)
file(WRITE "${dir}/noexpect/c.json" "${noexpect}")
expect_exit(1 "nothing was compared" ${COLLFUZZ} replay "${dir}/noexpect")
# replay of an empty or missing directory: bad input.
file(MAKE_DIRECTORY "${dir}/empty")
expect_exit(2 "holds no case file" ${COLLFUZZ} replay "${dir}/empty")
expect_exit(2 "no such file" ${COLLFUZZ} replay "${dir}/missing")
# An unreadable directory, or one with an unreadable subdirectory (as root, which reads any
# directory, through setpriv as nobody when it is there).
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(setpriv setpriv)
set(as_user "")
set(can_check_unreadable TRUE)
if(uid STREQUAL "0")
  if(setpriv)
    set(as_user ${setpriv} --reuid=65534 --regid=65534 --clear-groups)
    # nobody must reach the binary and this folder: a clone inside `mktemp -d` (mode 0700) is
    # closed to it, and every check below would fail on the path, not on the unreadable folder.
    execute_process(COMMAND ${as_user} ${COLLFUZZ} replay "${dir}/missing"
                    RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_VARIABLE probe_err)
    if(NOT probe_rc EQUAL 2 OR NOT probe_err MATCHES "no such file")
      message(STATUS "cli_values: the unreadable-folder checks are skipped: as uid 65534, "
                     "collfuzz or ${dir} cannot be reached (${probe_rc}: ${probe_err})")
      set(can_check_unreadable FALSE)
    endif()
  else()
    set(can_check_unreadable FALSE)
  endif()
endif()
if(can_check_unreadable)
  file(MAKE_DIRECTORY "${dir}/unreadable/sub")
  file(COPY "${case}" DESTINATION "${dir}/unreadable")
  file(CHMOD "${dir}/unreadable/sub" PERMISSIONS OWNER_WRITE)
  expect_exit(2 "sub: cannot read it" ${as_user} ${COLLFUZZ} replay "${dir}/unreadable/sub")
  expect_exit(2 "sub: cannot read it" ${as_user} ${COLLFUZZ} replay "${dir}/unreadable")
  file(CHMOD "${dir}/unreadable/sub" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endif()

# --- 3. Control characters never reach the terminal raw. --------------------------------------
string(ASCII 27 esc)
string(JSON evil SET "${text}" name "\"evil\\u001b[2J\\u009bname\"")
file(WRITE "${dir}/evil/evil.json" "${evil}")
expect_exit(0 "evil\\x1b[2J\\xc2\\x9bname" ${COLLFUZZ} run "${dir}/evil/evil.json")
expect_exit(0 "agrees" ${COLLFUZZ} run --executors reference,sim "${dir}/evil/evil.json")
string(FIND "${last_output}" "${esc}" raw)
if(NOT raw EQUAL -1)
  message(FATAL_ERROR "an escape character reached the terminal:\n${last_output}")
endif()
file(WRITE "${dir}/evil${esc}[2J.json" "{")
expect_exit(2 "evil\\x1b[2J.json" ${COLLFUZZ} run "${dir}/evil${esc}[2J.json")

# --- 4. Papercuts. ---------------------------------------------------------------------------
# replay of a findings directory reads the case files, not the .outcomes.json beside them.
file(WRITE "${dir}/findings/f.json" "${text}")
file(WRITE "${dir}/findings/f.outcomes.json" "{\"signature\": \"x\"}")
file(WRITE "${dir}/findings/.f.json.tmp" "{")
expect_exit(0 "1 passed, 0 failed" ${COLLFUZZ} replay "${dir}/findings")
# run - reads the case from standard input.
execute_process(COMMAND ${COLLFUZZ} run - INPUT_FILE "${case}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "<stdin>")
  message(FATAL_ERROR "run - : exit ${rc}\n${out}${err}")
endif()
execute_process(COMMAND ${COLLFUZZ} run - INPUT_FILE "${dir}/findings/.f.json.tmp" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 2 OR NOT err MATCHES "<stdin>")
  message(FATAL_ERROR "run - of bad input: exit ${rc}\n${out}${err}")
endif()
# An unknown subcommand is named, and the subcommands listed.
expect_exit(2 "unknown subcommand 'frobnicate'; subcommands: run, replay" ${COLLFUZZ} frobnicate)
# --resume: --seconds and --cases are this session's budget; a changed campaign flag is refused.
expect_exit(0 "10 cases" ${COLLFUZZ} fuzz --executors sim --cases 10 --out "${dir}/camp")
expect_exit(0 "this session's budget: 5 more cases" ${COLLFUZZ} fuzz --resume --cases 5 --out "${dir}/camp")
string(FIND "${last_output}" "collfuzz fuzz: 15 cases" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the resumed campaign did not run 5 more cases:\n${last_output}")
endif()
expect_exit(2 "--executors: the campaign in" ${COLLFUZZ} fuzz --resume --executors sim,cuda --out "${dir}/camp")
expect_exit(2 "--seed: the campaign in" ${COLLFUZZ} fuzz --resume --seed 7 --out "${dir}/camp")
expect_exit(0 "collfuzz fuzz: 17 cases" ${COLLFUZZ} fuzz --resume --executors reference,sim --seed 1 --cases 2 --out "${dir}/camp")
# .gitignore ignores the .venv-jax symlink (a pattern with a trailing / matches directories only).
find_program(git git)
if(git AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND ${git} -C "${SOURCE_DIR}" check-ignore -q --no-index .venv-jax
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR ".gitignore does not ignore .venv-jax")
  endif()
endif()
# docs/cli.md's range table lists every flag of flags.def.
file(STRINGS "${SOURCE_DIR}/harness/cli/flags.def" rows REGEX "^COLLFUZZ_FLAG\\(")
file(READ "${SOURCE_DIR}/docs/cli.md" doc)
foreach(row IN LISTS rows)
  string(REGEX MATCH "\"(-[a-z],)?(--[a-z-]+)\"" _ "${row}")
  string(FIND "${doc}" "| `${CMAKE_MATCH_2}` |" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "docs/cli.md's flag table has no row for ${CMAKE_MATCH_2}")
  endif()
endforeach()

# --- --version: the version on standard output, exit 0 (issue 27: it exited 2 on stderr). ---------
execute_process(COMMAND ${COLLFUZZ} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^collfuzz .*models JAX " OR NOT err STREQUAL "")
  message(FATAL_ERROR "collfuzz --version: expected exit 0 and the version on stdout, got ${rc}\n"
                      "stdout: ${out}\nstderr: ${err}")
endif()

# --- explain names an input drawn with jax.random as the call that draws it. ------------------
set(drawn "${SOURCE_DIR}/corpus/jax-tests/copy_gmem_to_smem_partitioned__warp_level_False_squeezed_index_False.json")
expect_exit(0 "Input b = jax.random.uniform(jax.random.split(jax.random.key(0), 2)[1], (128, 128), jnp.float32)"
            ${COLLFUZZ} explain "${drawn}")
expect_exit(0 "\"python\": \"jax.random.uniform(jax.random.split(jax.random.key(0), 2)[0], (128, 128), jnp.float32)\""
            ${COLLFUZZ} explain --json "${drawn}")
