# The allocator: every collfuzz executable links mimalloc (libmimalloc-dev) when it is found, so
# that malloc and operator new are mimalloc's. A campaign allocates in small pieces on every case
# and runs about 40% faster on mimalloc than on glibc's malloc (docs/performance.md). Left out
# where it cannot or must not serve: sanitizer builds (ASan replaces malloc), the libFuzzer build,
# the static build and the CUDA targets; without it everything runs on the system malloc, with
# the same results (allocator_name() says which one a process runs on).
option(COLLFUZZ_MIMALLOC "Link mimalloc into collfuzz's executables when it is installed" ON)

set(COLLFUZZ_ALLOCATOR "system malloc")
if(COLLFUZZ_MIMALLOC AND NOT COLLFUZZ_STATIC AND NOT COLLFUZZ_FUZZ
   AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  find_package(mimalloc 2 QUIET)
  if(mimalloc_FOUND)
    set(COLLFUZZ_ALLOCATOR "mimalloc")
    get_property(_collfuzz_all_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
    foreach(tgt IN LISTS _collfuzz_all_targets)
      get_target_property(_type ${tgt} TYPE)
      if(_type STREQUAL "EXECUTABLE" AND NOT tgt MATCHES "cuda")
        # Kept even though no object names a mimalloc symbol: its malloc overrides the C library's.
        target_link_libraries(${tgt} PRIVATE "-Wl,--push-state,--no-as-needed" mimalloc
                                             "-Wl,--pop-state")
      endif()
    endforeach()
  endif()
endif()
if(TARGET collfuzz_core_tests)
  target_compile_definitions(collfuzz_core_tests PRIVATE
                             COLLFUZZ_EXPECTED_ALLOCATOR="${COLLFUZZ_ALLOCATOR}")
endif()
message(STATUS "collfuzz: allocator: ${COLLFUZZ_ALLOCATOR}")
