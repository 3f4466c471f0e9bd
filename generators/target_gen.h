// Targets: the GPU architecture, the lowering semantics, the entry point and the profile.
#pragma once

#include <rapidcheck/Gen.h>

#include "harness/core/case.h"

namespace collfuzz::generators {

rc::Gen<Target> target();

}  // namespace collfuzz::generators
