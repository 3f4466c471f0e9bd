#include "harness/runner/kernel_import.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "harness/process/child_process.h"

#ifndef COLLFUZZ_SOURCE_DIR
#define COLLFUZZ_SOURCE_DIR "."
#endif

namespace collfuzz {

namespace {
constexpr double kImportSeconds = 300;              // importing JAX, the file, and tracing
constexpr std::size_t kMaxAnswerBytes = 64u << 20;  // the case file limit
}  // namespace

KernelImporter::KernelImporter(std::string python, std::string root)
    : python_(std::move(python)), root_(std::move(root)) {
  if (root_.empty()) {
    const char* env = std::getenv("COLLFUZZ_ROOT");
    root_ = env ? env : COLLFUZZ_SOURCE_DIR;
  }
  if (python_.empty()) {
    const char* env = std::getenv("COLLFUZZ_JAX_PYTHON");
    python_ = env ? env : root_ + "/.venv-jax/bin/python";
  }
}

std::string KernelImporter::unavailable() const {
  if (::access(python_.c_str(), X_OK) != 0)
    return "no Python at " + python_ + " (run ci/setup-jax.sh, or pass --python)";
  const std::string importer = root_ + "/harness/jax/cfjax_import.py";
  if (!std::filesystem::exists(importer)) return "no importer at " + importer;
  return "";
}

KernelImport KernelImporter::run(const KernelImportRequest& req) const {
  KernelImport out;
  process::ChildProcess child;
  std::string why;
  if (!child.spawn({python_, root_ + "/harness/jax/cfjax_import.py", req.file, req.name, req.arch,
                    req.profile, req.jax},
                   -1, why)) {
    out.error = "cannot start the importer (" + python_ + "): " + why;
    return out;
  }
  std::string line;
  const auto r = child.read_line(kImportSeconds, kMaxAnswerBytes, line);
  if (r != process::ChildProcess::Read::kLine) {
    out.error = r == process::ChildProcess::Read::kTimeout
                    ? "the importer gave no answer within " +
                          std::to_string(static_cast<int>(kImportSeconds)) + " s"
                    : "the importer ended without an answer (" + python_ + ")";
    return out;
  }
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    out.error = "the importer's answer is not a JSON object";
    return out;
  }
  if (j.contains("error") && j["error"].is_string()) {
    out.error = j["error"];
    out.bad_input = j.value("code", 3) == 2;
    return out;
  }
  if (!j.contains("case") || !j["case"].is_object()) {
    out.error = "the importer answered neither a case nor an error";
    return out;
  }
  out.case_json = j["case"];
  if (j.contains("warnings") && j["warnings"].is_array())
    for (const auto& w : j["warnings"])
      if (w.is_string()) out.warnings.push_back(w);
  return out;
}

}  // namespace collfuzz
