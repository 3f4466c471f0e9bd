// Walking a program the way JAX traces and lowers it: every op in program order, including the
// bodies of `when` (both are traced and lowered whatever the condition), with the enclosing
// run_scoped allocations in view.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/python_bool.h"

namespace collfuzz::ref {

struct Scope {
  const RunScoped* scoped = nullptr;  // innermost enclosing run_scoped, or null at top level
  std::map<std::string, const Alloc*> allocs;  // every allocation in view
};

// Calls `pre(op, scope)` for every op in program order; `scope` holds the allocations in view at
// that op (for a run_scoped, those of its parent). The body of a `when` whose condition is
// statically false is skipped: JAX never traces it.
void walk_program(const Body& program, const std::function<void(const Op&, const Scope&)>& pre);

// The same walk with `post(op, scope)` called after each op's nested body too (for a loop: after
// its body, where its carry's next is traced).
void walk_program(const Body& program, const std::function<void(const Op&, const Scope&)>& pre,
                  const std::function<void(const Op&, const Scope&)>& post);

}  // namespace collfuzz::ref
