# The CUDA executor (gpu/, docs/cuda-executor.md).
#  - Harness side, always built: the `cuda` executor that runs cases in the worker process and
#    says `unavailable` where there is no worker or no GPU.
#  - Host side of the engine (plan encoding, batching, decoding, the CPU emulator of the device
#    tables, the worker protocol), built wherever the shared lowering is.
#  - The interpreter kernel and the CUDA backend, built when COLLFUZZ_CUDA is on and nvcc is
#    found: sm_90a by default, sm_100a with -DCOLLFUZZ_CUDA_ARCH=sm_100a.
#  - collfuzz-cuda-worker (with or without CUDA: without, it can still --emulate), the GPU
#    benchmarks and the host-side tests (tests/gpu).
add_library(collfuzz_gpu_framing STATIC gpu/framed_outcome.cpp)
target_link_libraries(collfuzz_gpu_framing PUBLIC collfuzz_core PRIVATE collfuzz_warnings)
target_sources(collfuzz_executors PRIVATE gpu/cuda_executor.cpp gpu/worker_process.cpp)
target_link_libraries(collfuzz_executors PUBLIC collfuzz_gpu_framing)
target_compile_definitions(collfuzz_executors PRIVATE COLLFUZZ_BINARY_DIR="${CMAKE_BINARY_DIR}")

if(NOT TARGET collfuzz_lowering)
  message(STATUS "CUDA executor: the shared lowering is not part of this tree; worker not built")
  return()
endif()

add_library(collfuzz_gpu_host STATIC
  gpu/batch_image.cpp
  gpu/case_admission.cpp
  gpu/case_pipeline.cpp
  gpu/emulator_backend.cpp
  gpu/input_arena.cpp
  gpu/memory_tuning.cpp
  gpu/outcome_decoder.cpp
  gpu/plan_encoder.cpp
  gpu/table_emulator.cpp
  gpu/tensor_map_params.cpp
  gpu/worker_protocol.cpp
)
target_link_libraries(collfuzz_gpu_host PUBLIC collfuzz_lowering collfuzz_sim collfuzz_gpu_framing
                                        PRIVATE collfuzz_warnings)

set(COLLFUZZ_CUDA_ARCH "sm_90a" CACHE STRING "Target of the CUDA executor's kernel: sm_90a or sm_100a")
set_property(CACHE COLLFUZZ_CUDA_ARCH PROPERTY STRINGS sm_90a sm_100a)

set(COLLFUZZ_HAVE_CUDA OFF)
if(COLLFUZZ_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Architectures come from the -gencode flags below, not from CMake's list.
    set(CMAKE_CUDA_ARCHITECTURES OFF)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(COLLFUZZ_HAVE_CUDA ON)
  else()
    message(STATUS "CUDA executor: nvcc not found; the worker is built without CUDA")
  endif()
endif()

if(COLLFUZZ_HAVE_CUDA)
  if(COLLFUZZ_CUDA_ARCH STREQUAL "sm_100a")
    set(_collfuzz_gencode -gencode=arch=compute_100a,code=sm_100a)
  elseif(COLLFUZZ_CUDA_ARCH STREQUAL "sm_90a")
    set(_collfuzz_gencode -gencode=arch=compute_90a,code=sm_90a)
  else()
    message(FATAL_ERROR "COLLFUZZ_CUDA_ARCH must be sm_90a or sm_100a, not ${COLLFUZZ_CUDA_ARCH}")
  endif()
  message(STATUS "CUDA executor: kernel for ${COLLFUZZ_CUDA_ARCH} with ${CMAKE_CUDA_COMPILER}")

  # The kernel alone: nvcc flags (collfuzz_warnings holds host-compiler flags).
  add_library(collfuzz_cuda_kernel STATIC gpu/interpreter_kernel.cu)
  target_include_directories(collfuzz_cuda_kernel PRIVATE ${CMAKE_SOURCE_DIR})
  # CMake 3.25 knows no C++20 flag for nvcc 13 (it derives CUDA_STANDARD from CXX_STANDARD).
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set_target_properties(collfuzz_cuda_kernel PROPERTIES CUDA_STANDARD 20 CUDA_EXTENSIONS OFF)
  target_compile_options(collfuzz_cuda_kernel PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:${_collfuzz_gencode} -Xcompiler=-Wall,-Wextra>)
  if(COLLFUZZ_WERROR)
    target_compile_options(collfuzz_cuda_kernel PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
  target_link_libraries(collfuzz_cuda_kernel PUBLIC CUDA::cudart_static)

  add_library(collfuzz_cuda_backend STATIC gpu/cuda_backend.cpp gpu/driver_api.cpp)
  target_link_libraries(collfuzz_cuda_backend
    PUBLIC collfuzz_gpu_host collfuzz_cuda_kernel CUDA::cudart_static PRIVATE collfuzz_warnings)
  target_compile_definitions(collfuzz_cuda_backend PRIVATE COLLFUZZ_CUDA_ARCH="${COLLFUZZ_CUDA_ARCH}")
endif()

add_executable(collfuzz-cuda-worker gpu/worker_main.cpp)
target_link_libraries(collfuzz-cuda-worker PRIVATE collfuzz_gpu_host collfuzz_warnings)
if(COLLFUZZ_HAVE_CUDA)
  target_link_libraries(collfuzz-cuda-worker PRIVATE collfuzz_cuda_backend)
  target_compile_definitions(collfuzz-cuda-worker PRIVATE COLLFUZZ_HAVE_CUDA)
endif()
if(COLLFUZZ_STATIC)
  # The CUDA runtime loads the driver with dlopen, which a fully static program cannot do.
  target_link_options(collfuzz-cuda-worker PRIVATE -static-libstdc++ -static-libgcc)
endif()
# collfuzz finds the worker beside itself.
add_dependencies(collfuzz collfuzz-cuda-worker)

# GPU benchmarks (bench/cuda_bench.cpp): cases/s of the cuda executor against a launch floor.
if(COLLFUZZ_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(benchmark_FOUND)
    add_executable(collfuzz_cuda_bench bench/cuda_bench.cpp)
    target_link_libraries(collfuzz_cuda_bench
      PRIVATE collfuzz_gpu_host collfuzz_executors benchmark::benchmark collfuzz_warnings)
    if(COLLFUZZ_HAVE_CUDA)
      target_link_libraries(collfuzz_cuda_bench PRIVATE collfuzz_cuda_backend)
      target_compile_definitions(collfuzz_cuda_bench PRIVATE COLLFUZZ_HAVE_CUDA)
    endif()
    add_dependencies(collfuzz_cuda_bench collfuzz-cuda-worker)
  endif()
endif()

if(COLLFUZZ_BUILD_TESTS)
  add_executable(collfuzz_fake_cuda_worker tests/gpu/fake_worker.cpp)
  target_link_libraries(collfuzz_fake_cuda_worker PRIVATE collfuzz_gpu_host collfuzz_warnings)
  collfuzz_add_gtest(collfuzz_gpu_tests
    SOURCES
      tests/gpu/batch_image_test.cpp
      tests/gpu/case_admission_test.cpp
      tests/gpu/case_pipeline_test.cpp
      tests/gpu/cuda_executor_test.cpp
      tests/gpu/emulator_agreement_test.cpp
      tests/gpu/plan_encoder_test.cpp
      tests/gpu/tensor_map_params_test.cpp
      tests/gpu/worker_protocol_test.cpp
    LIBS collfuzz_gpu_host collfuzz_runner)
  target_compile_definitions(collfuzz_gpu_tests PRIVATE
    COLLFUZZ_WORKER="$<TARGET_FILE:collfuzz-cuda-worker>"
    COLLFUZZ_FAKE_WORKER="$<TARGET_FILE:collfuzz_fake_cuda_worker>")
  if(COLLFUZZ_HAVE_CUDA)
    target_compile_definitions(collfuzz_gpu_tests PRIVATE COLLFUZZ_HAVE_CUDA)
  endif()
  add_dependencies(collfuzz_gpu_tests collfuzz-cuda-worker collfuzz_fake_cuda_worker)
  # ci/gpu-differential, emulated, against planted breaks (and a control that must pass); in the
  # optimised builds only (the script's own logic does not change under the sanitizers, and the
  # worker protocol is tested under them by collfuzz_gpu_tests).
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    foreach(fault control unavailable silent disagree flaky)
      add_test(NAME gpu_differential_fault_${fault}
               COMMAND bash ${CMAKE_SOURCE_DIR}/tests/gpu/gpu_differential_faults.sh
                       ${CMAKE_BINARY_DIR} ${fault}
               WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
      set_tests_properties(gpu_differential_fault_${fault} PROPERTIES TIMEOUT 300)
    endforeach()
  endif()
endif()
