#include "harness/core/build_info.h"

#include "collfuzz_build_info.h"

namespace collfuzz {

const char* collfuzz_version() { return COLLFUZZ_VERSION_STRING; }
const char* collfuzz_commit() { return COLLFUZZ_GIT_COMMIT; }

std::string collfuzz_version_line() {
  return std::string("collfuzz ") + collfuzz_version() + " (commit " + collfuzz_commit() + ")";
}

}  // namespace collfuzz
