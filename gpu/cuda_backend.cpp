#include "gpu/cuda_backend.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <tuple>

#include "gpu/cuda_resources.h"
#include "gpu/driver_api.h"
#include "gpu/kernel_launch.h"

#ifndef COLLFUZZ_CUDA_ARCH
#define COLLFUZZ_CUDA_ARCH "sm_90a"
#endif

namespace collfuzz::gpu {

const char* cuda_build_arch() { return COLLFUZZ_CUDA_ARCH; }

namespace {

std::string err(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Launch errors that mean "not this configuration" rather than a broken context.
bool configuration_error(cudaError_t e) {
  return e == cudaErrorInvalidValue || e == cudaErrorInvalidConfiguration ||
         e == cudaErrorInvalidClusterSize || e == cudaErrorLaunchOutOfResources ||
         e == cudaErrorNotSupported;
}

Diagnostic abort_at_launch(std::string message) {
  return Diagnostic{"launch", "abort", std::move(message), "", ""};
}

class CudaBackend final : public DeviceBackend {
 public:
  explicit CudaBackend(const CudaBackendOptions& options) : options_(options) {
    unavailable_ = init();
  }

  std::string unavailable_reason() const override { return unavailable_; }
  std::optional<Arch> target_arch() const override { return arch_; }
  std::map<std::string, std::string> info() const override { return info_; }
  std::uint64_t input_arena_bytes() const override { return inputs_.size(); }

  std::string upload_input(std::uint64_t offset, const std::vector<std::uint8_t>& bytes) override {
    if (offset + bytes.size() > inputs_.size()) return "input outside the arena";
    // On the launch stream (a non-blocking stream is not ordered after the legacy default
    // stream), and finished before `bytes` goes away.
    cudaError_t e = cudaMemcpyAsync(inputs_.data() + offset, bytes.data(), bytes.size(),
                                    cudaMemcpyHostToDevice, stream_.get());
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream_.get());
    return e == cudaSuccess ? "" : "uploading an input: " + err(e);
  }

  std::optional<Diagnostic> encode_tensor_map(const TensorMapRequest& request,
                                              std::uint64_t input_offset,
                                              TensorMapBytes& out) override {
    const TensorMapParams& p = request.params;
    cuuint64_t dims[kMaxTensorRank] = {};
    cuuint64_t strides[kMaxTensorRank - 1] = {};
    cuuint32_t box[kMaxTensorRank] = {};
    cuuint32_t element_strides[kMaxTensorRank] = {};
    for (std::uint32_t i = 0; i < p.rank && i < kMaxTensorRank; ++i) {
      dims[i] = p.global_dim[i];
      box[i] = p.box[i];
      element_strides[i] = p.element_strides[i];
      if (i + 1 < p.rank) strides[i] = p.global_strides[i];
    }
    CUtensorMap map;
    const CUresult r =
        driver_.encode_tiled(&map, static_cast<CUtensorMapDataType>(p.data_type), p.rank,
                             inputs_.data() + input_offset, dims, strides, box, element_strides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      return abort_at_launch("cuTensorMapEncodeTiled failed: " + driver_.error_string(r));
    }
    static_assert(sizeof map == kTensorMapBytes);
    std::memcpy(out.data(), &map, sizeof map);
    return std::nullopt;
  }

  LaunchResult launch(const BatchImage& image, const LaunchTiming& timing) override {
    LaunchResult r;
    if (lost_) return sticky("the CUDA context was lost earlier in this process");
    const LaunchShape& shape = image.shape();
    KernelConfig k;
    k.grid[0] = shape.cluster[0] * image.num_cases();
    k.grid[1] = shape.cluster[1];
    k.grid[2] = shape.cluster[2];
    for (int d = 0; d < 3; ++d) k.cluster[d] = shape.cluster[static_cast<std::size_t>(d)];
    k.block_threads = shape.threads_per_cta * kLanes;
    k.smem_bytes = image.smem_bytes();
    k.stream = stream_.get();
    int occupancy_error = 0;
    const OccupancyKey key{shape.cluster, shape.threads_per_cta, k.smem_bytes};
    int clusters = 0;
    if (const auto it = occupancy_.find(key); it != occupancy_.end()) {
      clusters = it->second;
    } else {
      clusters = max_active_clusters(k, occupancy_error);
      if (clusters >= 0) occupancy_.emplace(key, clusters);
    }
    if (clusters <= 0) {
      r.status = LaunchResult::Status::kRefused;
      r.message = clusters < 0 ? "cudaOccupancyMaxActiveClusters: " +
                                     err(static_cast<cudaError_t>(occupancy_error))
                               : "no cluster of this shape and SMEM fits on the device "
                                 "(cudaOccupancyMaxActiveClusters is 0)";
      cudaGetLastError();
      return r;
    }
    const std::size_t table_bytes = image.bytes().size();
    const std::size_t result_bytes = std::max<std::size_t>(image.results_bytes(), 16);
    for (cudaError_t e : {tables_.reserve(table_bytes), table_staging_.reserve(table_bytes),
                          results_.reserve(result_bytes), result_staging_.reserve(result_bytes)}) {
      if (e != cudaSuccess) return sticky("allocating launch buffers: " + err(e));
    }
    std::memcpy(table_staging_.data(), image.bytes().data(), table_bytes);
    DevLaunch params;
    params.tables = tables_.data();
    params.layout = image.layout();
    params.inputs = inputs_.data();
    params.results = results_.data();
    params.timeout_ns = timing.timeout_ns;
    params.grace_ns = timing.grace_ns;
    params.num_cases = image.num_cases();
    cudaMemcpyAsync(tables_.data(), table_staging_.data(), table_bytes, cudaMemcpyHostToDevice,
                    stream_.get());
    cudaMemsetAsync(results_.data(), 0, result_bytes, stream_.get());
    cudaEventRecord(start_.get(), stream_.get());
    const auto launched = static_cast<cudaError_t>(launch_interpreter(k, params));
    if (launched != cudaSuccess) {
      cudaGetLastError();
      if (configuration_error(launched)) {
        // Let the copies already queued finish before the buffers are reused.
        cudaStreamSynchronize(stream_.get());
        r.status = LaunchResult::Status::kRefused;
        r.message = "cudaLaunchKernelEx: " + err(launched);
        return r;
      }
      return sticky("cudaLaunchKernelEx: " + err(launched));
    }
    cudaEventRecord(kernel_done_.get(), stream_.get());
    cudaMemcpyAsync(result_staging_.data(), results_.data(), result_bytes, cudaMemcpyDeviceToHost,
                    stream_.get());
    cudaEventRecord(copied_.get(), stream_.get());
    if (std::string why = wait(copied_.get()); !why.empty()) return sticky(why);
    float ms = 0;
    if (cudaEventElapsedTime(&ms, start_.get(), kernel_done_.get()) == cudaSuccess)
      r.kernel_ms = ms;
    r.results = result_staging_.data();  // read before the next launch
    return r;
  }

  std::optional<Diagnostic> probe_launch(const LaunchProbe& probe) override {
    if (lost_) return abort_at_launch("the CUDA context was lost earlier in this process");
    const CUfunction f = probe_function_;
    const std::uint64_t ctas =
        std::uint64_t{probe.cluster[0]} * probe.cluster[1] * probe.cluster[2];
    if (ctas > 8) {
      // Mosaic GPU's runtime opts in to non-portable sizes above 8.
      driver_.func_set_attribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    }
    if (probe.smem_bytes > 0) {
      const CUresult r = driver_.func_set_attribute(
          f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(probe.smem_bytes));
      if (r != CUDA_SUCCESS) {
        return abort_at_launch("Failed to set maximum dynamic shared memory size to " +
                               std::to_string(probe.smem_bytes) +
                               " bytes, cuFuncSetAttribute failed: " + driver_.error_string(r));
      }
    }
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned int>(probe.grid[0]);
    config.gridDimY = static_cast<unsigned int>(probe.grid[1]);
    config.gridDimZ = static_cast<unsigned int>(probe.grid[2]);
    config.blockDimX = static_cast<unsigned int>(probe.block_threads);
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = probe.smem_bytes;
    config.hStream = stream_.get();
    CUlaunchAttribute attribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = probe.cluster[0];
    attribute.value.clusterDim.y = probe.cluster[1];
    attribute.value.clusterDim.z = probe.cluster[2];
    config.attrs = &attribute;
    config.numAttrs = 1;
    const CUresult r = driver_.launch_kernel_ex(&config, f, nullptr, nullptr);
    if (r == CUDA_ERROR_INVALID_CLUSTER_SIZE) {
      int max = 0;
      driver_.max_potential_cluster_size(&max, f, &config);
      return abort_at_launch(
          "cuLaunchKernel failed with invalid cluster size (" + std::to_string(probe.cluster[0]) +
          ", " + std::to_string(probe.cluster[1]) + ", " + std::to_string(probe.cluster[2]) +
          "): maximum is " + std::to_string(max));
    }
    if (r != CUDA_SUCCESS) return abort_at_launch("cuLaunchKernelEx: " + driver_.error_string(r));
    if (cudaStreamSynchronize(stream_.get()) != cudaSuccess) lost_ = true;
    return std::nullopt;
  }

 private:
  CudaBackendOptions options_;
  std::string unavailable_;
  std::optional<Arch> arch_;
  std::map<std::string, std::string> info_;
  DriverApi driver_;
  CUfunction probe_function_ = nullptr;
  Stream stream_;
  Event start_;
  Event kernel_done_;
  Event copied_;
  DeviceBytes inputs_;
  DeviceBytes tables_;
  DeviceBytes results_;
  PinnedBytes table_staging_;
  PinnedBytes result_staging_;
  bool lost_ = false;
  using OccupancyKey = std::tuple<std::array<std::uint32_t, 3>, std::uint32_t, std::uint32_t>;
  std::map<OccupancyKey, int> occupancy_;  // co-resident clusters per (cluster, warpgroups, SMEM)

  LaunchResult sticky(std::string message) {
    lost_ = true;
    LaunchResult r;
    r.status = LaunchResult::Status::kSticky;
    r.message = std::move(message);
    return r;
  }

  // Waits for `event` with a deadline; a kernel that outlives it is treated as lost.
  std::string wait(cudaEvent_t event) {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration<double>(options_.kernel_deadline_s);
    while (true) {
      const cudaError_t e = cudaEventQuery(event);
      if (e == cudaSuccess) return {};
      if (e != cudaErrorNotReady) return "the launch failed: " + err(e);
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) {
        return "the kernel did not finish within " + std::to_string(options_.kernel_deadline_s) +
               " s despite its bounded waits";
      }
      if (now - start > std::chrono::milliseconds(2)) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  std::string init() {
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
      return "no CUDA device (" + err(e) + ")";
    }
    if (count == 0) return "no CUDA device";
    if (options_.device < 0 || options_.device >= count) {
      return "no CUDA device " + std::to_string(options_.device) + " (" + std::to_string(count) +
             " present)";
    }
    if (const cudaError_t e = cudaSetDevice(options_.device); e != cudaSuccess) {
      return "cudaSetDevice: " + err(e);
    }
    cudaFree(nullptr);  // create the primary context (the driver API calls use it)
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, options_.device); e != cudaSuccess) {
      return "cudaGetDeviceProperties: " + err(e);
    }
    int driver = 0;
    int runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const std::string cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    info_["device"] = prop.name;
    info_["compute_capability"] = cc;
    info_["sm_count"] = std::to_string(prop.multiProcessorCount);
    info_["cuda_driver"] = std::to_string(driver);
    info_["cuda_runtime"] = std::to_string(runtime);
    info_["build_arch"] = cuda_build_arch();
    int cluster_launch = 0;
    cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, options_.device);
    if (!cluster_launch)
      return "device " + std::string(prop.name) + " (" + cc + ") has no cluster launch";
    cudaFuncAttributes attributes{};
    if (const cudaError_t e = cudaFuncGetAttributes(&attributes, interpreter_symbol());
        e != cudaSuccess) {
      cudaGetLastError();
      return std::string("the interpreter kernel was built for ") + cuda_build_arch() +
             "; device " + prop.name + " is compute capability " + cc + " (" + err(e) + ")";
    }
    const std::string build = cuda_build_arch();
    if (prop.major == 9 && prop.minor == 0 && build == "sm_90a") {
      arch_ = Arch::kSm90a;
    } else if (prop.major == 10 && build == "sm_100a") {
      arch_ = Arch::kSm100a;
    } else {
      return "the interpreter kernel was built for " + build + "; device " + prop.name +
             " is compute capability " + cc;
    }
    info_["device_arch"] = to_string(*arch_);
    info_["kernel_registers"] = std::to_string(attributes.numRegs);
    if (std::string why = driver_.load(); !why.empty()) return why;
    cudaFunction_t probe = nullptr;
    if (const cudaError_t e = cudaGetFuncBySymbol(&probe, empty_cluster_symbol());
        e != cudaSuccess) {
      return "cudaGetFuncBySymbol: " + err(e);
    }
    probe_function_ = reinterpret_cast<CUfunction>(probe);
    const int smem = static_cast<int>(prop.sharedMemPerBlockOptin);
    info_["smem_per_block_optin"] = std::to_string(smem);
    for (const void* kernel : {interpreter_symbol(), empty_cluster_symbol()}) {
      if (const cudaError_t e =
              cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
          e != cudaSuccess) {
        return "cudaFuncSetAttribute(MaxDynamicSharedMemorySize): " + err(e);
      }
      const cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
      info_["non_portable_clusters"] = e == cudaSuccess ? "allowed" : err(e);
      cudaGetLastError();
    }
    for (cudaError_t e : {make_stream(stream_), make_event(start_), make_event(kernel_done_),
                          make_event(copied_)}) {
      if (e != cudaSuccess) return "creating a stream or an event: " + err(e);
    }
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    const std::uint64_t arena = std::min<std::uint64_t>(options_.input_arena_bytes, free_bytes / 4);
    if (const cudaError_t e = inputs_.reserve(arena); e != cudaSuccess) {
      return "allocating the input arena: " + err(e);
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_backend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

}  // namespace collfuzz::gpu
