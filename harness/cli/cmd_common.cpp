#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/core/errors.h"

namespace collfuzz::cli {

ExecutorOptions executor_options(const Flags& flags) {
  ExecutorOptions o;
  o.case_timeout_seconds = flags.timeout;
  o.python = flags.python;
  o.slow_every = flags.slow_every;
  return o;
}

Profile parse_profile_flag(const std::string& value, Profile fallback) {
  if (value.empty()) return fallback;
  if (value == "mosaic") return Profile::kMosaic;
  if (value == "interpret") return Profile::kInterpret;
  throw InputError("--profile", "expected mosaic or interpret, got \"" + value + "\"");
}

std::optional<JaxVersion> parse_jax_flag(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return require_jax_version(value, "--jax");
}

Case with_jax_flag(Case c, const std::optional<JaxVersion>& v) {
  if (v) {
    c.target.jax = *v;
    c.target.jax_pinned = true;
  }
  return c;
}

DiagnosticLevel parse_level_flag(const std::string& value) {
  if (auto l = parse_diagnostic_level(value)) return *l;
  throw InputError("--level", "expected verdict, rule or message, got \"" + value + "\"");
}

}  // namespace collfuzz::cli
