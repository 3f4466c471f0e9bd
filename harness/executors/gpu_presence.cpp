#include "harness/executors/gpu_presence.h"

#include <filesystem>

namespace collfuzz {

std::string no_gpu_reason() {
  std::error_code ec;
  for (int i = 0; i < 64; ++i) {
    if (std::filesystem::exists("/dev/nvidia" + std::to_string(i), ec)) return {};
  }
  return "no GPU on this machine (no /dev/nvidia0)";
}

}  // namespace collfuzz
