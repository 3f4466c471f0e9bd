// The CPU cluster simulator (harness/sim) behind the executor interface, for profile mosaic.
#pragma once

#include "harness/executors/executor.h"
#include "harness/sim/simulator.h"

namespace collfuzz {

class SimExecutor final : public Executor {
 public:
  std::string name() const override { return "sim"; }
  Profile profile() const override { return Profile::kMosaic; }
  Outcome run(const Case& c) override;

 private:
  sim::Simulator simulator_;
};

}  // namespace collfuzz
