# ctest helper: fails when the binary named by BINARY contains the mutant selection seam.
# It reads the symbol table (nm): a debug build's DWARF names the consteval `mutant_active`
# stub that no code calls, which is not a hook. Without nm, any mention of the names fails.
find_program(NM_PROGRAM NAMES nm llvm-nm)
if(NM_PROGRAM)
  execute_process(COMMAND "${NM_PROGRAM}" -C "${BINARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM_PROGRAM} could not read ${BINARY}")
  endif()
  string(REGEX MATCHALL "[^\n]*(set_active_mutant|mutant_active)[^\n]*" hooks "${symbols}")
else()
  file(STRINGS "${BINARY}" hooks REGEX "set_active_mutant|mutant_active")
endif()
if(hooks)
  message(FATAL_ERROR "${BINARY} contains mutant hooks: ${hooks}")
endif()
