// Provenance: the collfuzz version (CMake's project VERSION) and the git commit it was built from
// ("unknown" without git, e.g. from a source tarball; "-dirty" with uncommitted changes), embedded
// at build time by cmake/build_info.cmake. Reports record them next to each executor's versions.
#pragma once

#include <string>

namespace collfuzz {

const char* collfuzz_version();
const char* collfuzz_commit();
// "collfuzz 0.1.0 (commit 0123456789ab)".
std::string collfuzz_version_line();

}  // namespace collfuzz
