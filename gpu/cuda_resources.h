// RAII owners of the CUDA runtime resources the CUDA backend holds: device memory, pinned host
// memory, a stream and events. Each releases its resource in its destructor, is movable, and is
// never copied. Errors at allocation are returned to the caller (the constructor leaves the
// owner empty); release errors are ignored (a lost context frees everything anyway).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace collfuzz::gpu {

template <typename Handle, typename Traits>
class CudaHandle {
 public:
  CudaHandle() = default;
  explicit CudaHandle(Handle h) : h_(h) {}
  ~CudaHandle() { reset(); }
  CudaHandle(const CudaHandle&) = delete;
  CudaHandle& operator=(const CudaHandle&) = delete;
  CudaHandle(CudaHandle&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  CudaHandle& operator=(CudaHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  Handle get() const { return h_; }
  explicit operator bool() const { return h_ != Handle{}; }
  void reset() {
    if (h_ != Handle{}) Traits::release(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

struct StreamTraits {
  static void release(cudaStream_t s) { cudaStreamDestroy(s); }
};
struct EventTraits {
  static void release(cudaEvent_t e) { cudaEventDestroy(e); }
};

using Stream = CudaHandle<cudaStream_t, StreamTraits>;
using Event = CudaHandle<cudaEvent_t, EventTraits>;

inline cudaError_t make_stream(Stream& out) {
  cudaStream_t s = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess) out = Stream(s);
  return e;
}

inline cudaError_t make_event(Event& out) {
  cudaEvent_t ev = nullptr;
  const cudaError_t e = cudaEventCreate(&ev);
  if (e == cudaSuccess) out = Event(ev);
  return e;
}

// A byte buffer in device memory or in pinned host memory, with its capacity.
template <bool kPinned>
class CudaBytes {
 public:
  CudaBytes() = default;
  ~CudaBytes() { reset(); }
  CudaBytes(const CudaBytes&) = delete;
  CudaBytes& operator=(const CudaBytes&) = delete;
  CudaBytes(CudaBytes&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  CudaBytes& operator=(CudaBytes&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  // Makes room for `bytes` (contents are not kept when it grows).
  cudaError_t reserve(std::size_t bytes) {
    if (bytes <= size_ && data_) return cudaSuccess;
    reset();
    void* p = nullptr;
    const cudaError_t e = kPinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) return e;
    data_ = static_cast<unsigned char*>(p);
    size_ = bytes;
    return cudaSuccess;
  }
  void reset() {
    if (data_) {
      if (kPinned) {
        cudaFreeHost(data_);
      } else {
        cudaFree(data_);
      }
    }
    data_ = nullptr;
    size_ = 0;
  }
  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

using DeviceBytes = CudaBytes<false>;
using PinnedBytes = CudaBytes<true>;

}  // namespace collfuzz::gpu
