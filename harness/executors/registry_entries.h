// The factories named in executors.def.
#pragma once

#include <memory>

#include "harness/executors/executor.h"

namespace collfuzz {}  // namespace collfuzz
