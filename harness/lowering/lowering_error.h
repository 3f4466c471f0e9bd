// The error the lowering raises where Mosaic GPU raises one: the stage JAX was in, the Python
// exception class, the exact message, and the id of the rule in oracles/reference/rules.def that
// names it (empty when no rule does). The driver turns it into a `rejected` outcome.
#pragma once

#include <string>
#include <utility>

#include "harness/core/outcome.h"

namespace collfuzz::lowering {

// The stages Mosaic GPU passes through, in order (docs/outcome-format.md).
enum class Stage : std::uint8_t {
  kMesh,
  kTrace,
  kEstimate,
  kModule,
  kLower,
  kVerify,
  kDialect,
  kFinalize,
  kCompile,
  kLaunch
};

inline const char* stage_name(Stage s) {
  switch (s) {
    case Stage::kMesh:
      return "mesh";
    case Stage::kTrace:
      return "trace";
    case Stage::kEstimate:
      return "estimate";
    case Stage::kModule:
      return "module";
    case Stage::kLower:
      return "lower";
    case Stage::kVerify:
      return "verify";
    case Stage::kDialect:
      return "dialect";
    case Stage::kFinalize:
      return "finalize";
    case Stage::kCompile:
      return "compile";
    case Stage::kLaunch:
      return "launch";
  }
  return "?";
}

struct LoweringError {
  Diagnostic diagnostic;
};

// Raises `exception(message)` at `stage`, attributed to `rule` and to the op at JSON path `op`.
[[noreturn]] inline void raise(Stage stage, const char* exception, std::string message,
                               std::string_view rule, const std::string& op) {
  throw LoweringError{
      Diagnostic{stage_name(stage), exception, std::move(message), std::string(rule), op}};
}

}  // namespace collfuzz::lowering
