#include "gpu/emulator_backend.h"

#include <cstring>

#include "gpu/table_emulator.h"

namespace collfuzz::gpu {

std::map<std::string, std::string> EmulatorBackend::info() const {
  return {{"device", "CPU emulation of the device tables (not a GPU)"},
          {"device_arch", to_string(arch_)}};
}

std::string EmulatorBackend::upload_input(std::uint64_t offset,
                                          const std::vector<std::uint8_t>& bytes) {
  if (inputs_.size() < offset + bytes.size()) inputs_.resize(offset + bytes.size(), 0);
  if (!bytes.empty()) std::memcpy(inputs_.data() + offset, bytes.data(), bytes.size());
  return {};
}

std::optional<Diagnostic> EmulatorBackend::encode_tensor_map(const TensorMapRequest& request,
                                                             std::uint64_t input_offset,
                                                             TensorMapBytes& out) {
  TensorMapParams p = request.params;
  p.global_address = input_offset;
  std::memcpy(out.data(), &p, sizeof p);
  return std::nullopt;
}

LaunchResult EmulatorBackend::launch(const BatchImage& image, const LaunchTiming&) {
  ++launches_;
  LaunchResult r;
  emulate_batch(image, inputs_, r.owned);
  r.results = r.owned.data();
  return r;
}

std::optional<Diagnostic> EmulatorBackend::probe_launch(const LaunchProbe& p) {
  const auto abort = [](std::string message) {
    return Diagnostic{"launch", "abort", std::move(message), "", ""};
  };
  const std::uint64_t ctas = std::uint64_t{p.cluster[0]} * p.cluster[1] * p.cluster[2];
  if (p.block_threads > 1024) return abort("cuLaunchKernelEx: invalid argument");
  if (p.grid[0] > 0x7FFFFFFFu || p.grid[1] > 65535 || p.grid[2] > 65535) {
    return abort("cuLaunchKernelEx: invalid argument");
  }
  if (ctas > 16) {
    return abort("cuLaunchKernel failed with invalid cluster size (" +
                 std::to_string(p.cluster[0]) + ", " + std::to_string(p.cluster[1]) + ", " +
                 std::to_string(p.cluster[2]) + "): maximum is 16");
  }
  return std::nullopt;
}

}  // namespace collfuzz::gpu
