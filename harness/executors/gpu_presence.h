// Whether this machine has an NVIDIA GPU, answered cheaply (a look at /dev, no driver call, no
// process): an executor that needs a GPU says unavailable at once on a machine without one,
// instead of starting a JAX process only to hear the same.
#pragma once

#include <string>

namespace collfuzz {

// Empty when an NVIDIA GPU device node (/dev/nvidia0 ... /dev/nvidia63) exists; otherwise the
// reason to report ("no GPU on this machine (no /dev/nvidia0)").
std::string no_gpu_reason();

}  // namespace collfuzz
