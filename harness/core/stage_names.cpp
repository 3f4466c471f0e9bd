#include "harness/core/stage_names.h"

#include <algorithm>
#include <cstddef>

namespace collfuzz {

namespace {

constexpr std::string_view kStages[] = {"mesh",     "trace",   "interpret", "estimate",
                                        "module",   "lower",   "verify",    "dialect",
                                        "finalize", "compile", "launch",    "run"};

// JAX's stages (jax.stages), each named for the call that reaches it: jit(f).trace(), .lower(),
// .compile(), and calling the compiled kernel. A test asserts that an error is raised by one of
// those calls, and each call runs every stage before it (jit(f).lower() traces first), so a JAX
// stage admits every collfuzz stage up to its own last one. GPU interpret mode interprets the
// kernel's jaxpr when the pallas_call is lowered; its callbacks fire at execution.
struct Alias {
  std::string_view name;
  std::string_view last;  // the last collfuzz stage the call runs
};

const Alias kAliases[] = {
    {"tracing", "trace"},
    {"lowering", "finalize"},
    {"compilation", "compile"},
    {"execution", "run"},
};

std::ptrdiff_t position(std::string_view stage) {
  const auto* it = std::find(std::begin(kStages), std::end(kStages), stage);
  return it == std::end(kStages) ? -1 : it - std::begin(kStages);
}

}  // namespace

bool is_stage_alias(std::string_view name) {
  return std::any_of(std::begin(kAliases), std::end(kAliases),
                     [&](const Alias& a) { return a.name == name; });
}

bool is_stage_name(std::string_view name) {
  return is_stage_alias(name) ||
         std::find(std::begin(kStages), std::end(kStages), name) != std::end(kStages);
}

bool stage_admits(std::string_view expected, std::string_view actual) {
  if (expected.empty() || actual.empty() || expected == actual) return true;
  for (const Alias& a : kAliases) {
    if (a.name == expected) {
      const std::ptrdiff_t at = position(actual);
      return at >= 0 && at <= position(a.last);
    }
  }
  return false;
}

}  // namespace collfuzz
