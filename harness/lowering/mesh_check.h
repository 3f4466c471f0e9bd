// plgpu.Mesh.__post_init__ (jax/_src/pallas/mosaic_gpu/core.py, Mesh): the checks run when the
// kernel's mesh is built, before anything is traced.
#pragma once

#include <string>

#include "harness/core/case.h"

namespace collfuzz::lowering {

// Raises the mesh-stage diagnostic of the case's mesh, if any. A pallas_call builds no mesh.
void check_mesh(const Case& c);

// `repr(plgpu.Mesh(...))` as the dataclass prints it (the fields are passed as tuples).
std::string mesh_repr(const Mesh& m);

}  // namespace collfuzz::lowering
