// Stage names of a diagnostic (docs/outcome-format.md, "Stages"): collfuzz's own, and JAX's
// ahead-of-time stages (tracing, lowering, compilation, execution), which a stored expectation
// may give instead. A JAX stage is the call that raised (jit(f).lower() and so on): it admits
// every collfuzz stage that call runs, its own and the ones before it.
#pragma once

#include <string_view>

namespace collfuzz {

// Whether `name` is a collfuzz stage or a JAX stage alias.
bool is_stage_name(std::string_view name);

// Whether an expected stage (a collfuzz stage or a JAX alias) admits the stage an implementation
// reported. An empty stage on either side admits anything.
bool stage_admits(std::string_view expected, std::string_view actual);

// Whether `name` is a JAX alias (not one of collfuzz's own stage names).
bool is_stage_alias(std::string_view name);

}  // namespace collfuzz
