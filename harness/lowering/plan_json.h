// A plan as JSON, for reading and debugging (docs/simulator.md shows one).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/lowering/plan.h"

namespace collfuzz::lowering {

nlohmann::json plan_to_json(const Plan& plan);

}  // namespace collfuzz::lowering
