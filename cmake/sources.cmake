# Libraries, one per layer: core (case, outcome) <- reference <- oracles <- executors <- cli.
add_library(collfuzz_core STATIC
  harness/core/case_json.cpp
  harness/core/dtype.cpp
  harness/core/fill.cpp
  harness/core/json_reader.cpp
  harness/core/ndarray.cpp
  harness/core/outcome_json.cpp
  harness/core/pyrepr.cpp
)
target_include_directories(collfuzz_core PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(collfuzz_core PUBLIC nlohmann_json::nlohmann_json PRIVATE collfuzz_warnings)
