#include "harness/core/jax_version.h"

#include <array>
#include <stdexcept>

#include "harness/core/errors.h"

namespace collfuzz {
namespace {

struct Known {
  JaxVersion v;
  std::string_view name;
};
constexpr std::array<Known, 2> kKnown = {{
    {JaxVersion::k0_11_2, "0.11.2"},
    {JaxVersion::k0_12_0_1, "0.12.0.1"},
}};
constexpr std::array<JaxVersion, 2> kVersions = {JaxVersion::k0_11_2, JaxVersion::k0_12_0_1};

JaxVersion bound(std::string_view s) {
  const auto v = parse_jax_version(s);
  if (!v) throw std::logic_error("rules.def: unknown JAX version bound \"" + std::string(s) + "\"");
  return *v;
}

}  // namespace

const char* to_string(JaxVersion v) {
  for (const Known& k : kKnown) {
    if (k.v == v) return k.name.data();
  }
  return "?";
}

std::optional<JaxVersion> parse_jax_version(std::string_view s) {
  for (const Known& k : kKnown) {
    if (k.name == s) return k.v;
  }
  return std::nullopt;
}

JaxVersion require_jax_version(std::string_view s, const std::string& path) {
  if (auto v = parse_jax_version(s)) return *v;
  throw InputError(path, "unknown JAX version \"" + std::string(s) + "\"; collfuzz models " +
                             known_jax_versions_list());
}

std::span<const JaxVersion> known_jax_versions() { return kVersions; }

std::string known_jax_versions_list() {
  std::string out;
  for (const Known& k : kKnown) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

bool jax_version_in_range(JaxVersion v, std::string_view since, std::string_view until) {
  if (!since.empty() && v < bound(since)) return false;
  if (!until.empty() && v >= bound(until)) return false;
  return true;
}

}  // namespace collfuzz
