// The device backend that runs batch images on the CPU with gpu/table_emulator.h. Its launch
// probe applies the documented limits (16 CTAs per cluster, 1024 threads per block, grid
// extents) with Mosaic GPU's messages. Every outcome says it is an emulation: it tests the host
// side of the CUDA executor and never stands for hardware.
#pragma once

#include "gpu/device_backend.h"

namespace collfuzz::gpu {

class EmulatorBackend final : public DeviceBackend {
 public:
  explicit EmulatorBackend(Arch arch = Arch::kSm90a) : arch_(arch) {}

  std::string unavailable_reason() const override { return {}; }
  std::optional<Arch> target_arch() const override { return arch_; }
  std::map<std::string, std::string> info() const override;
  std::uint64_t input_arena_bytes() const override { return std::uint64_t{1} << 30; }
  std::string upload_input(std::uint64_t offset, const std::vector<std::uint8_t>& bytes) override;
  std::optional<Diagnostic> encode_tensor_map(const TensorMapRequest& request,
                                              std::uint64_t input_offset,
                                              TensorMapBytes& out) override;
  LaunchResult launch(const BatchImage& image, const LaunchTiming& timing) override;
  std::optional<Diagnostic> probe_launch(const LaunchProbe& probe) override;

  std::uint64_t launches() const { return launches_; }

 private:
  Arch arch_;
  std::vector<std::uint8_t> inputs_;
  std::uint64_t launches_ = 0;
};

}  // namespace collfuzz::gpu
