// The GMEM inputs of the cases, resident in one device allocation: each distinct input (shape,
// dtype, fill) is filled on the host and uploaded once, with a guard band of kInputGuardBytes on
// both sides (a bulk copy may read a little out of bounds), and stays while the arena has room;
// a campaign and a benchmark keep hitting the same few inputs. When it is full the arena is
// emptied between launches.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::gpu {

class InputArena {
 public:
  // `upload(offset, bytes)` copies into the device arena; it returns an error text or "".
  using Upload = std::function<std::string(std::uint64_t, const std::vector<std::uint8_t>&)>;

  InputArena(std::uint64_t capacity, Upload upload)
      : capacity_(capacity), upload_(std::move(upload)) {}

  // The arena offset of `spec`'s first byte, uploading it if needed; nullopt when it does not fit
  // beside what is resident (empty the arena with clear() and retry), `error` set when it can
  // never fit or the upload failed.
  std::optional<std::uint64_t> place(const ArraySpec& spec, std::string& error);
  void clear();

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return top_; }
  std::uint64_t uploads() const { return uploads_; }

 private:
  std::uint64_t capacity_;
  Upload upload_;
  std::unordered_map<std::string, std::uint64_t> offsets_;  // by contents key
  std::uint64_t top_ = 0;
  std::uint64_t uploads_ = 0;
};

}  // namespace collfuzz::gpu
