# Precompiled headers: every C++ target of the build gets the standard and third-party headers
# nearly every source includes (nlohmann/json.hpp alone is 1.8 s of a 3-6 s compile at -O3 on the
# 2-core machine, GoogleTest's header 1.5 s of each test source). Each target compiles its own
# header once (its flags differ: warnings, sanitizers, definitions) and every source of it reuses
# it: docs/performance.md, "Build time". COLLFUZZ_PCH=OFF builds without them (same results).
# Clang only: through a precompiled header GCC 12 at -O3 reports libstdc++'s inlined
# char_traits::copy as our code (-Wstringop-overflow and -Warray-bounds false positives, GCC bug
# 105329's family, as -Wrestrict in CMakeLists.txt). The clang builds use them: the debug preset
# (ASan, UBSan and libFuzzer's coverage, the slowest build of the test command) and the fuzz one.
option(COLLFUZZ_PCH "Precompile the common headers of each C++ target (clang)" ON)
if(NOT COLLFUZZ_PCH OR NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  return()
endif()

set(_collfuzz_pch_common <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional>
                         <set> <string> <string_view> <utility> <vector> <nlohmann/json.hpp>)
get_property(_collfuzz_pch_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
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
  set(_headers ${_collfuzz_pch_common})
  get_target_property(_libs ${tgt} LINK_LIBRARIES)
  if(_libs AND "GTest::gtest" IN_LIST _libs)
    list(APPEND _headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${tgt} PRIVATE ${_headers})
endforeach()
