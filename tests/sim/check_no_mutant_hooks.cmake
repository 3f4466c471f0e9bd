# ctest helper: fails when the binary named by BINARY contains the mutant selection seam.
file(STRINGS "${BINARY}" hooks REGEX "set_active_mutant|mutant_active")
if(hooks)
  message(FATAL_ERROR "${BINARY} contains mutant hooks: ${hooks}")
endif()
