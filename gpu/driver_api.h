// The few CUDA driver API functions the CUDA backend calls, found at run time through the
// runtime's cudaGetDriverEntryPointByVersion, so that nothing links libcuda at build time (the
// CI machine builds without a driver): cuTensorMapEncodeTiled, and cuLaunchKernelEx,
// cuOccupancyMaxPotentialClusterSize, cuFuncSetAttribute and cuGetErrorString for launch probes
// that report what Mosaic GPU's runtime would (it launches through the driver API).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace collfuzz::gpu {

class DriverApi {
 public:
  // Empty when every entry point was found; otherwise which one was not.
  std::string load();

  std::string error_string(CUresult r) const;

  PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
  PFN_cuOccupancyMaxPotentialClusterSize_v11070 max_potential_cluster_size = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
};

}  // namespace collfuzz::gpu
