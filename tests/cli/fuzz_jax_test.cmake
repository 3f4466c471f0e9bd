# `collfuzz fuzz --jax V` (issue 12): the campaign records the release, a resumed campaign refuses
# another, and a JAX executor running another release is named up front and never compared.
# Run by ctest (cli_fuzz_jax).
set(dir "${CMAKE_CURRENT_BINARY_DIR}/cli_fuzz_jax")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")

include("${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake")

# 1. The release is part of the campaign; --resume keeps it and refuses another.
expect_exit(0 "judged by JAX 0.12.0.1"
            ${COLLFUZZ} fuzz --executors sim --jax 0.12.0.1 --cases 20 --out "${dir}/a")
file(READ "${dir}/a/campaign.json" campaign)
string(JSON jax GET "${campaign}" jax)
if(NOT jax STREQUAL "0.12.0.1")
  message(FATAL_ERROR "campaign.json records jax '${jax}', expected 0.12.0.1")
endif()
expect_exit(2 "--jax" ${COLLFUZZ} fuzz --resume --jax 0.11.2 --cases 5 --out "${dir}/a")
expect_exit(2 "--jax: " ${COLLFUZZ} fuzz --jax 0.10.0 --cases 1 --out "${dir}/never")
# Without --jax the campaign records none.
expect_exit(0 "collfuzz fuzz:" ${COLLFUZZ} fuzz --executors sim --cases 5 --out "${dir}/b")
file(READ "${dir}/b/campaign.json" campaign)
string(JSON jax ERROR_VARIABLE none GET "${campaign}" jax)
if(NOT none)
  message(FATAL_ERROR "a campaign without --jax records jax '${jax}'")
endif()

# 2. A JAX executor of another release: named up front, its results never compared.
if(EXISTS "${SOURCE_DIR}/.venv-jax/bin/python")
  # Its only executor compared nothing, so the campaign does not pass (exit 1, as run and replay).
  expect_exit(1 "nothing was compared"
              ${COLLFUZZ} fuzz --executors jax-interpret --python "${SOURCE_DIR}/.venv-jax/bin/python"
              --jax 0.12.0.1 --cases 8 --slow-jobs 0 --slow-every 1 --out "${dir}/d")
  string(FIND "${last_output}" "version mismatches, not compared" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the mismatched executor was not named up front:\n${last_output}")
  endif()
  string(FIND "${last_output}" "0 findings" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "a mismatched executor produced findings:\n${last_output}")
  endif()
else()
  message(STATUS "no .venv-jax: the version-mismatch part is skipped")
endif()
