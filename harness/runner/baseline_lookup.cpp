#include "harness/runner/baseline_lookup.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef COLLFUZZ_SOURCE_DIR
#define COLLFUZZ_SOURCE_DIR "."
#endif

namespace collfuzz {

namespace {

std::filesystem::path running_binary(const std::string& exe) {
  if (!exe.empty()) return exe;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self;
}

}  // namespace

BaselineLocation find_known_divergences(const std::string& flag, const std::string& exe,
                                        const std::string& source_dir) {
  return find_ci_file("known-divergences.json", flag, "--baseline", exe, source_dir);
}

BaselineLocation find_ci_file(const std::string& file_name, const std::string& flag,
                              const std::string& flag_name, const std::string& exe,
                              const std::string& source_dir) {
  BaselineLocation where;
  if (!flag.empty()) {
    where.path = flag;
    where.from = flag_name;
    where.looked.push_back(flag);
    return where;
  }
  std::vector<std::pair<std::filesystem::path, std::string>> candidates;
  if (const char* root = std::getenv("COLLFUZZ_ROOT"); root && *root)
    candidates.emplace_back(std::filesystem::path(root) / "ci" / file_name, "COLLFUZZ_ROOT");
  if (const auto bin = running_binary(exe); !bin.empty()) {
    const auto dir = bin.parent_path();
    candidates.emplace_back(dir / file_name, "next to the binary");
    candidates.emplace_back(dir / ".." / "ci" / file_name, "next to the binary");
    candidates.emplace_back(dir / ".." / ".." / "ci" / file_name, "next to the binary");
  }
  candidates.emplace_back(std::filesystem::path("ci") / file_name, "the working directory");
  candidates.emplace_back(
      std::filesystem::path(source_dir.empty() ? COLLFUZZ_SOURCE_DIR : source_dir) / "ci" /
          file_name,
      "the source tree collfuzz was built from");
  for (const auto& [path, from] : candidates) {
    const std::string p = path.lexically_normal().string();
    where.looked.push_back(p);
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      where.path = p;
      where.from = from;
      return where;
    }
  }
  return where;
}

std::string known_bugs_location_line(const BaselineLocation& where) {
  if (!where.path.empty()) return "known JAX bugs: " + where.path + " (from " + where.from + ")";
  std::string looked;
  for (const auto& p : where.looked) looked += (looked.empty() ? "" : ", ") + p;
  return "warning: no known JAX bugs list found (looked in: " + looked +
         "); every known JAX bug counts as a new finding. Pass --known-bugs FILE or set "
         "COLLFUZZ_ROOT to the collfuzz source tree";
}

std::string baseline_location_line(const BaselineLocation& where) {
  if (!where.path.empty()) return "baseline: " + where.path + " (from " + where.from + ")";
  std::string looked;
  for (const auto& p : where.looked) looked += (looked.empty() ? "" : ", ") + p;
  return "warning: no known-divergence baseline found (looked in: " + looked +
         "); every known divergence counts as a new finding. Pass --baseline FILE or set "
         "COLLFUZZ_ROOT to the collfuzz source tree";
}

}  // namespace collfuzz
