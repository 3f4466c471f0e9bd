// The reference checker behind the executor interface, for one profile.
#pragma once

#include "harness/executors/executor.h"

namespace collfuzz {

class ReferenceExecutor final : public Executor {
 public:
  explicit ReferenceExecutor(Profile profile) : profile_(profile) {}
  std::string name() const override { return "reference"; }
  Profile profile() const override { return profile_; }
  Outcome run(const Case& c) override;

 private:
  Profile profile_;
};

}  // namespace collfuzz
