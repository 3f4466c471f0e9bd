#include "harness/executors/reference_executor.h"

#include "oracles/reference/reference.h"

namespace collfuzz {

Outcome ReferenceExecutor::run(const Case& c) { return predict(c, profile_).outcome; }

}  // namespace collfuzz
