// A case as a standalone JAX script (`collfuzz repro`, docs/python.md): the kernel the JAX
// executor's adapter builds, run as the adapter runs it, asserting what the reference predicts for
// the mode. The script text is written by harness/jax/cfjax_repro.py, which mirrors the adapter's
// translation (cfjax_translate.py) op by op; this file asks it, through the JAX venv's Python.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "harness/core/case.h"
#include "harness/executors/jax_python.h"
#include "harness/process/child_process.h"

namespace collfuzz {

enum class ReproMode { kInterpret, kGpu, kLower };
const char* to_string(ReproMode m);
// "interpret", "gpu", "lower" -> the mode; nullopt otherwise.
std::optional<ReproMode> parse_repro_mode(const std::string& s);
// The profile a mode's outcome is predicted for: interpret for kInterpret, mosaic otherwise.
Profile repro_profile(ReproMode m);

// The request line the generator reads: the case, the mode, the reference's predicted outcome for
// the mode, how JAX's message must match it, the fix line of its rule, and provenance.
std::string repro_request(const Case& c, ReproMode mode, const std::string& command);

struct ReproScript {
  std::string script;  // the Python source; empty when `error` says why not
  std::string error;   // the case holds something the generator cannot write (names it)
};

// One generator process, started on first use and kept for every further case.
class ReproGenerator {
 public:
  // `python` empty: $COLLFUZZ_JAX_PYTHON, else ROOT/.venv-jax/bin/python; `root` empty:
  // $COLLFUZZ_ROOT, else the source tree collfuzz was built from.
  ReproGenerator(std::string python, std::string root);
  ~ReproGenerator();
  ReproGenerator(const ReproGenerator&) = delete;
  ReproGenerator& operator=(const ReproGenerator&) = delete;

  // Why no script can be written here (no Python at the path), or empty.
  std::string unavailable() const;
  // Throws std::runtime_error when the generator cannot be started or breaks its protocol.
  ReproScript generate(const Case& c, ReproMode mode, const std::string& command);

 private:
  JaxPython jax_;
  std::unique_ptr<process::ChildProcess> child_;
};

}  // namespace collfuzz
