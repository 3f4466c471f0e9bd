// Tracing the kernel body to a jaxpr, as JAX does before any lowering: the program in order, with
// `pl.when` of a Python constant inlined or dropped (helpers.when calls the body, or not, without
// a cond), the allocation constructors of each run_scoped evaluated before its body is traced, and
// copy_gmem_to_smem's Python-level check and abstract evaluation. Raises the trace-stage
// diagnostics; returns the program as the jaxpr holds it.
#pragma once

#include <optional>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/python_bool.h"

namespace collfuzz::lowering {

// One equation of the traced kernel: a run_scoped or a traced `when` (a cond) with its body, or
// a leaf op.
struct TracedNode {
  const Op* op = nullptr;
  std::vector<TracedNode> body;
};
using TracedBody = std::vector<TracedNode>;

// The shape of `src.at[index]` (integer-indexed dims dropped) and of `dst.at[index]`.
Shape indexed_src_shape(const ArraySpec& src, const std::vector<IndexEntry>& index);
Shape indexed_dst_shape(const Alloc& dst, const std::vector<std::int64_t>& index,
                        const std::optional<IndexEntry>& slice = std::nullopt);

// The size of `name` in the axis environment the body is traced in, or nullopt (NameError).
std::optional<std::int64_t> traced_axis_size(const Case& c, const AxisName& name);

TracedBody trace_kernel(const Case& c);

}  // namespace collfuzz::lowering
