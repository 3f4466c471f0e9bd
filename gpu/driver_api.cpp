#include "gpu/driver_api.h"

#include <cuda_runtime.h>

namespace collfuzz::gpu {
namespace {

template <typename F>
std::string find(const char* symbol, unsigned int version, F& out) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, version, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    return std::string(symbol) + " (" +
           (e != cudaSuccess ? cudaGetErrorString(e) : "not provided by the driver") + ")";
  }
  out = reinterpret_cast<F>(p);
  return {};
}

}  // namespace

std::string DriverApi::load() {
  for (std::string why :
       {find("cuTensorMapEncodeTiled", 12000, encode_tiled),
        find("cuLaunchKernelEx", 12000, launch_kernel_ex),
        find("cuOccupancyMaxPotentialClusterSize", 12000, max_potential_cluster_size),
        find("cuFuncSetAttribute", 12000, func_set_attribute),
        find("cuGetErrorString", 12000, get_error_string)}) {
    if (!why.empty()) return "the driver lacks " + why;
  }
  return {};
}

std::string DriverApi::error_string(CUresult r) const {
  const char* s = nullptr;
  if (get_error_string && get_error_string(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

}  // namespace collfuzz::gpu
