# ctest helper: fails when the binary named by BINARY contains the mutant selection seam.
# It reads the symbol table (nm): a debug build's DWARF names the consteval `mutant_active`
# stub that no code calls, which is not a hook. Without nm, any mention of the names fails.
# nm's output goes to a file read line by line (file(STRINGS ... REGEX)): a regex over the whole
# output of a debug binary, tens of megabytes in one string, took cmake over ten minutes.
find_program(NM_PROGRAM NAMES nm llvm-nm)
if(NM_PROGRAM)
  get_filename_component(name "${BINARY}" NAME)
  set(listing "${CMAKE_CURRENT_BINARY_DIR}/${name}.nm.txt")
  execute_process(COMMAND "${NM_PROGRAM}" -C "${BINARY}" OUTPUT_FILE "${listing}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM_PROGRAM} could not read ${BINARY}")
  endif()
  file(STRINGS "${listing}" hooks REGEX "set_active_mutant|mutant_active")
  file(REMOVE "${listing}")
else()
  file(STRINGS "${BINARY}" hooks REGEX "set_active_mutant|mutant_active")
endif()
if(hooks)
  message(FATAL_ERROR "${BINARY} contains mutant hooks: ${hooks}")
endif()
