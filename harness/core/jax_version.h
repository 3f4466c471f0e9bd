// The JAX releases collfuzz models (a case's `target.jax`, `--jax`, an executor's hello). The
// rules, the lowering and the simulator follow the version: rows of rules.def carry since/until,
// and version-keyed facts ask `at_least`. docs/rules.md lists what changed between versions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace collfuzz {

// In release order: comparisons between versions are comparisons of these values.
enum class JaxVersion : std::uint8_t {
  k0_11_2,    // the default: the release the GPU runners carry
  k0_12_0_1,  // modelled since issue 12
};

inline constexpr JaxVersion kDefaultJaxVersion = JaxVersion::k0_11_2;

// "0.11.2", "0.12.0.1".
const char* to_string(JaxVersion v);
// The exact release string of a modelled version, or nullopt.
std::optional<JaxVersion> parse_jax_version(std::string_view s);
// parse_jax_version, or an InputError naming `path` (exit code 2) that lists the known versions.
JaxVersion require_jax_version(std::string_view s, const std::string& path);
// Every modelled version, oldest first.
std::span<const JaxVersion> known_jax_versions();
// "0.11.2, 0.12.0.1" (for error messages and --help).
std::string known_jax_versions_list();

// A version range [since, until) as rules.def writes it: empty since = from the first modelled
// version, empty until = still holds. A bound that is not a modelled version is a programming
// error (a test checks every row).
bool jax_version_in_range(JaxVersion v, std::string_view since, std::string_view until);

inline bool at_least(JaxVersion v, JaxVersion since) { return v >= since; }

}  // namespace collfuzz
