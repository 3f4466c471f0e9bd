// The memory a simulator keeps from one case to the next, as a GPU executor keeps its device
// allocations: the GMEM inputs it filled, and one SMEM arena per CTA slot (reset to the sentinel
// at every kernel start, reallocated only when a case needs more).
#pragma once

#include <cstdint>
#include <deque>

#include "harness/sim/gmem_inputs.h"
#include "harness/sim/shared_memory.h"

namespace collfuzz::sim {

class DeviceMemory {
 public:
  GmemInputCache& inputs() { return inputs_; }
  // SMEM of CTA `rank`, valid for the whole run.
  SharedMemory& smem(std::int64_t rank) {
    while (static_cast<std::int64_t>(smem_.size()) <= rank) smem_.emplace_back();
    return smem_[static_cast<std::size_t>(rank)];
  }

 private:
  GmemInputCache inputs_;
  std::deque<SharedMemory> smem_;  // stable addresses
};

}  // namespace collfuzz::sim
