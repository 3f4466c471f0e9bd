// Whole cases: a mesh, a target, and a program for that mesh and target.
#pragma once

#include <rapidcheck/Gen.h>

#include "harness/core/case.h"

namespace collfuzz::generators {

// Every case the campaign, `collfuzz gen` and the property tests draw from.
rc::Gen<Case> any_case();

}  // namespace collfuzz::generators
