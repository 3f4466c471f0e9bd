# collfuzz freeze (docs/cli.md): a case without `expect` becomes a regression case that replay
# compares; --check writes nothing; a stored expect that disagrees is kept and reported unless
# --update; an unpinned case whose releases disagree is refused, naming target.jax. And `run`
# shows each profile's acceptance. Run by ctest (cli_freeze) from the build directory, outside the
# source tree; takes a few seconds.
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_freeze")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

# A corpus case (interpret mode accepts what the compiler rejects), its expect removed.
set(source "${SOURCE_DIR}/corpus/launch_context.minor_dim_16b__multicast_chunk_warpgroup.json")
file(READ "${source}" text)
string(JSON text REMOVE "${text}" expect)
file(WRITE "${dir}/case.json" "${text}")

# `run` names both profiles' verdicts and that they differ, as text and as JSON.
expect_exit(0 "interpret mode accepts what the compiler rejects" ${COLLFUZZ} run "${dir}/case.json")
string(FIND "${last_output}" "mosaic (compiler):  raises" at)
if(at EQUAL -1)
  message(FATAL_ERROR "run does not show the compiler's verdict:\n${last_output}")
endif()
expect_exit(0 "\"agree\": false" ${COLLFUZZ} run "${dir}/case.json" --json)
string(JSON accepted GET "${last_output}" 0 profiles interpret accepted)
string(JSON mosaic_accepted GET "${last_output}" 0 profiles mosaic accepted)
if(NOT accepted STREQUAL "ON" OR NOT mosaic_accepted STREQUAL "OFF")
  message(FATAL_ERROR "run --json profiles: interpret ${accepted}, mosaic ${mosaic_accepted}")
endif()

# Without expect, replay compares nothing (exit 1); --check would freeze it and writes nothing.
expect_exit(1 "nothing was compared" ${COLLFUZZ} replay "${dir}/case.json")
expect_exit(1 "would freeze" ${COLLFUZZ} freeze --check "${dir}/case.json")
file(READ "${dir}/case.json" after_check)
if(NOT after_check STREQUAL text)
  message(FATAL_ERROR "freeze --check changed the file")
endif()

# freeze writes the prediction (the file keeps its keys in their order); replay compares, passes.
expect_exit(0 "1 frozen, 0 kept" ${COLLFUZZ} freeze "${dir}/case.json")
file(READ "${dir}/case.json" frozen)
string(FIND "${frozen}" "\"format\"" format_at)
string(FIND "${frozen}" "\"expect\"" expect_at)
string(JSON kind GET "${frozen}" expect kind)
string(JSON exception GET "${frozen}" expect diagnostic exception)
if(NOT format_at LESS expect_at OR NOT kind STREQUAL "rejected" OR NOT exception STREQUAL "ValueError")
  message(FATAL_ERROR "frozen expect: format at ${format_at}, expect at ${expect_at}, kind ${kind}, exception ${exception}")
endif()
expect_exit(0 "1 passed, 0 failed" ${COLLFUZZ} replay "${dir}/case.json")
expect_exit(0 "0 frozen, 1 kept" ${COLLFUZZ} freeze "${dir}/case.json")
expect_exit(0 "0 to freeze, 1 kept" ${COLLFUZZ} freeze --check "${dir}/case.json")

# Both profiles: expect.mosaic raises, expect.interpret completes; replay still passes.
expect_exit(0 "1 frozen" ${COLLFUZZ} freeze --both-profiles "${dir}/case.json")
file(READ "${dir}/case.json" both)
string(JSON interpret_kind GET "${both}" expect interpret kind)
string(JSON mosaic_kind GET "${both}" expect mosaic kind)
if(NOT interpret_kind STREQUAL "completed" OR NOT mosaic_kind STREQUAL "rejected")
  message(FATAL_ERROR "--both-profiles: interpret ${interpret_kind}, mosaic ${mosaic_kind}")
endif()
expect_exit(0 "1 passed, 0 failed" ${COLLFUZZ} replay "${dir}/case.json")

# A stored expect that disagrees is reported, exit 1, and left; --update replaces it.
string(JSON wrong SET "${text}" expect "{\"kind\": \"completed\"}")
file(WRITE "${dir}/wrong.json" "${wrong}")
expect_exit(1 "DISAGREES" ${COLLFUZZ} freeze "${dir}/wrong.json")
file(READ "${dir}/wrong.json" still)
if(NOT still STREQUAL wrong)
  message(FATAL_ERROR "freeze changed a file whose expect disagrees")
endif()
expect_exit(0 "1 frozen" ${COLLFUZZ} freeze --update "${dir}/wrong.json")
expect_exit(0 "1 passed, 0 failed" ${COLLFUZZ} replay "${dir}/wrong.json")

# A case pinned to 0.12.0.1 whose rule does not exist in 0.11.2, unpinned: the releases disagree,
# so freeze refuses it (exit 2, naming target.jax and --jax); --jax pins and freezes it.
set(pinned "${SOURCE_DIR}/corpus/copy.leader_tracked.last_axis_size_2__cluster4.json")
file(READ "${pinned}" p)
string(JSON p REMOVE "${p}" expect)
string(JSON p REMOVE "${p}" target jax)
file(WRITE "${dir}/unpinned.json" "${p}")
expect_exit(2 "unpinned.json:$.target.jax" ${COLLFUZZ} freeze "${dir}/unpinned.json")
expect_exit(0 "expect written for JAX 0.12.0.1" ${COLLFUZZ} freeze --jax 0.12.0.1 "${dir}/unpinned.json")
file(READ "${dir}/unpinned.json" repinned)
string(JSON jax GET "${repinned}" target jax)
if(NOT jax STREQUAL "0.12.0.1")
  message(FATAL_ERROR "freeze --jax did not pin target.jax: ${jax}")
endif()
expect_exit(0 "1 passed, 0 failed" ${COLLFUZZ} replay "${dir}/unpinned.json")
# --jax contradicting the case's own pin is refused.
expect_exit(2 "is pinned to JAX 0.12.0.1" ${COLLFUZZ} freeze --jax 0.11.2 "${dir}/unpinned.json")

# Bad input: a malformed case exits 2 naming the field, and nothing is written.
file(WRITE "${dir}/bad.json" "{\"format\": 1, \"name\": \"b\", \"mesh\": {\"cluster\": [0]}}")
expect_exit(2 "bad.json:$." ${COLLFUZZ} freeze "${dir}/bad.json")
