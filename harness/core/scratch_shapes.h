// A case's `scratch_shapes` (docs/case-format.md): the scratch buffers and barriers of
// `plgpu.kernel(..., scratch_types=...)` / `pl.pallas_call(..., scratch_shapes=...)`, allocated at
// kernel entry and alive for the whole kernel. They are read as what JAX makes of them: JAX
// 0.11.2's plgpu.kernel wraps its body in `pl.run_scoped(body, *scratch_types,
// collective_axes=thread_name)` (collective over the Pallas threads when the mesh has a thread
// axis); pallas_call has no threads, and its scratch operands are a scope around the whole body
// with no collective axes. So a case with scratch_shapes is the same case with one `run_scoped`
// around its program; the ops' paths are then `$.program[0].body[...]`.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz {

// True when `j` (a case object) has a `scratch_shapes` member.
bool has_scratch_shapes(const nlohmann::json& j);

// The case JSON with `scratch_shapes` turned into a `run_scoped` around `program`. Throws
// InputError naming `$.scratch_shapes` when it is not an array.
nlohmann::json without_scratch_shapes(const nlohmann::json& j);

// An InputError path of the rewritten case -> the path in the file: `$.program[0].allocs` is
// `$.scratch_shapes`, `$.program[0].body` is `$.program`.
std::string scratch_shapes_source_path(const std::string& path);

// The collective axes JAX gives scratch shapes in `c`: (thread_name,) for plgpu.kernel with a
// thread axis, () otherwise.
AxisNames scratch_shapes_axes(const Case& c);

// The RunScoped the case's JSON writes as `scratch_shapes`, or null: the program's one op, marked
// as scratch shapes, with the axes scratch_shapes_axes() gives (a shrunk or edited case that no
// longer fits is written as its run_scoped).
const RunScoped* written_as_scratch_shapes(const Case& c);

}  // namespace collfuzz
