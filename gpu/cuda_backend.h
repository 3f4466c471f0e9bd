// The CUDA device behind the case pipeline: device discovery (a missing GPU or a device other
// than the one the kernel was built for makes every case `unavailable`, cheaply), the input
// arena, tensor maps encoded with cuTensorMapEncodeTiled, batch launches of the interpreter
// kernel with cudaLaunchKernelEx and the batch's cluster dims (non-portable sizes opted in),
// and launch probes through the driver API. A launch the device refuses is a diagnostic; a
// sticky error or a kernel that outlives its deadline loses the context (the worker restarts).
#pragma once

#include <memory>
#include <string>

#include "gpu/device_backend.h"

namespace collfuzz::gpu {

struct CudaBackendOptions {
  int device = 0;
  std::uint64_t input_arena_bytes = std::uint64_t{1} << 30;
  double kernel_deadline_s = 30;  // a launch still running after this is treated as lost
};

// Never null; a backend whose unavailable_reason() says why when there is no usable GPU.
std::unique_ptr<DeviceBackend> make_cuda_backend(const CudaBackendOptions& options);

// The kernels' architecture as built ("sm_90a"; "sm_100a" when configured for it).
const char* cuda_build_arch();

}  // namespace collfuzz::gpu
