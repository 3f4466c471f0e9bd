// Where the JAX side lives: the repository root (for harness/jax/*.py) and the Python of the JAX
// virtual environment. One resolution for every caller that starts a JAX-side script (the JAX
// executors, `collfuzz repro`, `collfuzz import`).
#pragma once

#include <string>

namespace collfuzz {

struct JaxPython {
  std::string root;    // the repository root
  std::string python;  // the interpreter

  // `root`: given, else $COLLFUZZ_ROOT, else the source tree collfuzz was built from. `python`:
  // given, else $COLLFUZZ_JAX_PYTHON, else ROOT/.venv-jax/bin/python.
  static JaxPython resolve(std::string python, std::string root);

  std::string script(const std::string& name) const { return root + "/harness/jax/" + name; }

  // "" when the interpreter is executable and harness/jax/NAME exists; else why not (`what`
  // names the script in the message: "generator", "importer").
  std::string unavailable(const std::string& name, const std::string& what) const;
};

}  // namespace collfuzz
