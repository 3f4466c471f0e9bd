// What the oracles say about one executor's outcome held against the reference's: every
// disagreement, each with a stable signature for deduplication.
#pragma once

#include <string>
#include <vector>

#include "harness/core/outcome.h"

namespace collfuzz {

// How strictly diagnostics are compared (docs/oracles.md).
enum class DiagnosticLevel : std::uint8_t {
  kVerdict,  // accept or reject only
  kRule,     // the same rule id (and exception class)
  kMessage,  // the exact message (the default)
};
std::optional<DiagnosticLevel> parse_diagnostic_level(std::string_view s);

struct Mismatch {
  std::string oracle;     // diagnostic, bytes, memory
  std::string kind;       // e.g. rejected_vs_accepted, would_hang, data
  std::string what;       // rule id or op kind the disagreement is about
  std::string detail;     // human-readable
  std::string signature;  // oracle:kind:what:executor
};

struct Verdict {
  std::string executor;
  // false: nothing was compared: the executor did not run the case (unavailable), or the
  // reference predicts undefined behaviour and the executor's run is defined (undefined_oracle)
  bool ran = false;
  std::string reason;  // why nothing was compared
  std::vector<Mismatch> mismatches;
  int unobserved = 0;  // fields the executor could not observe (never counted as agreeing)
  int compared = 0;    // fields compared
  bool agrees() const { return ran && mismatches.empty(); }
};

std::string make_signature(const std::string& oracle, const std::string& kind,
                           const std::string& what, const std::string& executor);

// Records one disagreement found by `oracle` (diagnostic, bytes, memory), signed with the
// verdict's executor.
void add_mismatch(Verdict& v, const char* oracle, const char* kind, const std::string& what,
                  std::string detail);

}  // namespace collfuzz
