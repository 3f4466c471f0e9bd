// The CPU cluster simulator behind one call: the shared lowering turns the case into a plan (or
// the diagnostic Mosaic GPU raises), and the plan runs over every CTA. Keeps the GMEM inputs it
// filled and its SMEM arenas for the next cases.
#pragma once

#include "harness/core/case.h"
#include "harness/core/outcome.h"
#include "harness/sim/device_memory.h"

namespace collfuzz::sim {

class Simulator {
 public:
  Outcome run(const Case& c);

 private:
  DeviceMemory memory_;
};

}  // namespace collfuzz::sim
