# Precompiled headers: every C++ target of the build gets the standard and third-party headers
# nearly every source includes (nlohmann/json.hpp alone is 1.8 s of a 3-6 s compile at -O3 on the
# 2-core machine, GoogleTest's header 1.5 s of each test source). Each target compiles its own
# header once (its flags differ: warnings, sanitizers, definitions) and every source of it reuses
# it: docs/performance.md, "Build time". COLLFUZZ_PCH=OFF builds without them (same results).
# Both compilers: the clang builds (debug: ASan, UBSan, libFuzzer's coverage; fuzz) and, since
# 2026-12-05, GCC's release build. Through a precompiled header GCC 12 at -O3 reports libstdc++'s
# inlined char_traits::copy and memcpy as our code (-Wstringop-overflow, -Wstringop-overread and
# -Warray-bounds false positives, GCC bug 105329's family, as -Wrestrict in CMakeLists.txt): with
# the header on, GCC builds without those three (the sanitized debug build checks the same
# accesses at run time); COLLFUZZ_PCH=OFF keeps them.
option(COLLFUZZ_PCH "Precompile the common headers of each C++ target (clang)" ON)
if(NOT COLLFUZZ_PCH)
  return()
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(collfuzz_warnings INTERFACE -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds)
endif()

set(_collfuzz_pch_common <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional>
                         <set> <string> <string_view> <utility> <vector> <nlohmann/json.hpp>)
# One header per kind of target, not one per target: the targets whose own compile options are
# the same and that link the same headers (GoogleTest's or not) reuse one precompiled header, built
# by a host object library of one empty source (cmake/pch_host.cpp) that depends on nothing of
# ours, so that no target waits on another to start compiling. Before 2026-12-06 each of the 33
# targets built its own, 100 to 125 MB each and 4 s of a core each (docs/performance.md).
# Definitions may differ between a host and its users (they do not appear in these headers; GCC
# and clang accept it, and -Winvalid-pch under -Werror would fail the build where they did not).
get_property(_collfuzz_pch_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
set(_collfuzz_pch_keys "")
foreach(tgt IN LISTS _collfuzz_pch_targets)
  get_target_property(_type ${tgt} TYPE)
  if(NOT _type STREQUAL "STATIC_LIBRARY" AND NOT _type STREQUAL "EXECUTABLE")
    continue()
  endif()
  get_target_property(_sources ${tgt} SOURCES)
  list(FILTER _sources INCLUDE REGEX "\\.cpp$")
  list(LENGTH _sources _n)
  if(_n LESS 2)  # a header compiled for one source saves nothing
    continue()
  endif()
  get_target_property(_libs ${tgt} LINK_LIBRARIES)
  set(_gtest OFF)
  if(_libs AND "GTest::gtest" IN_LIST _libs)
    set(_gtest ON)
  endif()
  get_target_property(_options ${tgt} COMPILE_OPTIONS)
  if(NOT _options)
    set(_options "")
  endif()
  string(SHA1 _key "${_gtest};${_options}")
  string(SUBSTRING "${_key}" 0 8 _key)
  set(_host collfuzz_pch_${_key})
  if(NOT TARGET ${_host})
    add_library(${_host} OBJECT ${CMAKE_SOURCE_DIR}/cmake/pch_host.cpp)
    target_link_libraries(${_host} PRIVATE collfuzz_warnings nlohmann_json::nlohmann_json)
    if(_options)
      target_compile_options(${_host} PRIVATE ${_options})
    endif()
    set(_headers ${_collfuzz_pch_common})
    if(_gtest)
      target_link_libraries(${_host} PRIVATE GTest::gtest)
      list(APPEND _headers <gtest/gtest.h>)
    endif()
    target_precompile_headers(${_host} PRIVATE ${_headers})
    list(APPEND _collfuzz_pch_keys ${_key})
  endif()
  target_precompile_headers(${tgt} REUSE_FROM ${_host})
endforeach()
list(LENGTH _collfuzz_pch_keys _n)
message(STATUS "collfuzz: ${_n} precompiled headers")
