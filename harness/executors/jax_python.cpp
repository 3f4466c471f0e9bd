#include "harness/executors/jax_python.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#ifndef COLLFUZZ_SOURCE_DIR
#define COLLFUZZ_SOURCE_DIR "."
#endif

namespace collfuzz {

JaxPython JaxPython::resolve(std::string python, std::string root) {
  JaxPython p{std::move(root), std::move(python)};
  if (p.root.empty()) {
    const char* env = std::getenv("COLLFUZZ_ROOT");
    p.root = env ? env : COLLFUZZ_SOURCE_DIR;
  }
  if (p.python.empty()) {
    const char* env = std::getenv("COLLFUZZ_JAX_PYTHON");
    p.python = env ? env : p.root + "/.venv-jax/bin/python";
  }
  return p;
}

std::string JaxPython::unavailable(const std::string& name, const std::string& what) const {
  if (::access(python.c_str(), X_OK) != 0)
    return "no Python at " + python + " (run ci/setup-jax.sh, or pass --python)";
  const std::string path = script(name);
  if (!std::filesystem::exists(path)) return "no " + what + " at " + path;
  return "";
}

}  // namespace collfuzz
