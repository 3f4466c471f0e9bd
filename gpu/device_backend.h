// What the case pipeline needs from a device: its identity, an input arena, tensor-map encoding,
// batch launches and launch probes. Two implementations: the CUDA device (gpu/cuda_backend.h)
// and the CPU emulator of the device tables (gpu/emulator_backend.h, tests and --emulate).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/batch_image.h"
#include "gpu/encoded_case.h"
#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

// The wait budget and the drain grace of a launch.
struct LaunchTiming {
  std::uint64_t timeout_ns = 100'000'000;  // per wait (barrier waits and block syncs)
  std::uint64_t grace_ns = 5'000;          // after the final cluster barrier, before read-back
};

struct LaunchResult {
  enum class Status : std::uint8_t {
    kOk,       // ran; `results` holds the results arena
    kRefused,  // the launch configuration was refused (not sticky): `message`
    kSticky,   // a sticky error: the context is lost, the process must restart
  };
  Status status = Status::kOk;
  std::string message;
  // The results arena: owned, or the backend's own buffer (valid until its next launch).
  std::vector<std::uint8_t> owned;
  const std::uint8_t* results = nullptr;
  double kernel_ms = 0;
};

// A launch configuration to try without running a case (a lowering's launch-stage prediction, or
// a refused batch): grid and cluster in CUDA dims, threads per block, dynamic SMEM.
struct LaunchProbe {
  std::array<std::uint32_t, 3> cluster{1, 1, 1};
  std::array<std::uint64_t, 3> grid{1, 1, 1};  // in blocks, as cuLaunchKernelEx takes it
  std::uint64_t block_threads = 128;
  std::uint32_t smem_bytes = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // Empty when cases can run; otherwise why not (no device, wrong device, build without CUDA).
  virtual std::string unavailable_reason() const = 0;
  // The case target this device runs (sm_90a on Hopper, sm_100a on Blackwell).
  virtual std::optional<Arch> target_arch() const = 0;
  // Facts for the hello line and every outcome's info (device, compute capability, driver).
  virtual std::map<std::string, std::string> info() const = 0;
  virtual std::uint64_t input_arena_bytes() const = 0;
  virtual std::string upload_input(std::uint64_t offset,
                                   const std::vector<std::uint8_t>& bytes) = 0;
  // Encodes one tensor map for an input at arena offset `input_offset`; a Diagnostic when the
  // driver refuses it (cuTensorMapEncodeTiled's error, as Mosaic GPU's runtime reports it).
  virtual std::optional<Diagnostic> encode_tensor_map(const TensorMapRequest& request,
                                                      std::uint64_t input_offset,
                                                      TensorMapBytes& out) = 0;
  virtual LaunchResult launch(const BatchImage& image, const LaunchTiming& timing) = 0;
  // nullopt when the device accepts the configuration; the launch diagnostic otherwise.
  virtual std::optional<Diagnostic> probe_launch(const LaunchProbe& probe) = 0;
};

}  // namespace collfuzz::gpu
