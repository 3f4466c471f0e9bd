// One launch's device tables: the encoded cases of a batch (same launch shape, one cluster each)
// concatenated into one image that is copied to the device in one transfer, and the layout of
// the results arena the kernel writes. The kernel receives the image and the offsets of its
// tables (DevTables).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gpu/device_plan.h"
#include "gpu/encoded_case.h"

namespace collfuzz::gpu {

using TensorMapBytes = std::array<std::uint8_t, kTensorMapBytes>;

class BatchImage {
 public:
  explicit BatchImage(LaunchShape shape) : shape_(shape) {}

  // Appends a case: `input_offsets` are its inputs' byte offsets in the input arena,
  // `tensor_maps` its encoded tensor maps (one per EncodedCase::tensor_maps entry).
  void add(const EncodedCase& c, const std::vector<std::uint64_t>& input_offsets,
           const std::vector<TensorMapBytes>& tensor_maps);
  // Lays the tables out; call once, after the last add().
  void finish();

  const LaunchShape& shape() const { return shape_; }
  std::uint32_t num_cases() const { return static_cast<std::uint32_t>(cases_.size()); }
  std::uint32_t smem_bytes() const { return smem_bytes_; }  // the largest of the batch
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  const DevTables& layout() const { return layout_; }
  std::uint64_t results_bytes() const { return results_bytes_; }
  std::uint64_t results_base(std::size_t i) const { return cases_[i].results_base; }

 private:
  LaunchShape shape_;
  std::vector<DevCase> cases_;
  std::vector<DevThread> threads_;
  std::vector<DevStep> steps_;
  std::vector<DevMbar> mbars_;
  std::vector<DevScope> scopes_;
  std::vector<DevBuffer> buffers_;
  std::vector<DevStore> stores_;
  std::vector<std::uint64_t> input_offsets_;
  std::vector<TensorMapBytes> tmaps_;
  std::uint32_t smem_bytes_ = 0;
  std::uint64_t results_bytes_ = 0;
  std::vector<std::uint8_t> bytes_;
  DevTables layout_;
};

// Typed views of a finished image (the CPU emulator and tests read it as the kernel does).
template <typename T>
const T* table(const std::vector<std::uint8_t>& image, std::uint64_t offset) {
  return reinterpret_cast<const T*>(image.data() + offset);
}

}  // namespace collfuzz::gpu
