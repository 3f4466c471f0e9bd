// A Pallas Mosaic GPU kernel in a Python file traced into a case (`collfuzz import`,
// docs/python.md). The tracing is harness/jax/cfjax_import.py, run with the JAX venv's Python;
// this file starts it and reads its one-line answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/executors/jax_python.h"

namespace collfuzz {

struct KernelImportRequest {
  std::string file;     // the Python file
  std::string name;     // the function in it (empty: collfuzz_case)
  std::string arch;     // target.arch (empty: sm_90a)
  std::string profile;  // target.profile (empty: interpret if the kernel was built for it)
  std::string jax;      // target.jax (empty: not pinned)
};

struct KernelImport {
  nlohmann::json case_json;           // the case, as the importer wrote it (not yet validated)
  std::vector<std::string> warnings;  // e.g. an input whose values are no collfuzz fill
  std::string error;                  // empty on success
  bool bad_input = false;             // the error is the file's (exit 2), not the importer's (3)
};

// `python` empty: $COLLFUZZ_JAX_PYTHON, else ROOT/.venv-jax/bin/python; `root` empty:
// $COLLFUZZ_ROOT, else the source tree collfuzz was built from.
class KernelImporter {
 public:
  KernelImporter(std::string python, std::string root);
  // Why nothing can be imported here (no Python at the path, no importer), or empty.
  std::string unavailable() const;
  // Traces the kernel; never throws for what the file holds (error/bad_input say it).
  KernelImport run(const KernelImportRequest& req) const;

 private:
  JaxPython jax_;
};

}  // namespace collfuzz
