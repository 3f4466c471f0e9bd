#include "harness/runner/kernel_import.h"

#include "harness/process/child_process.h"

namespace collfuzz {

namespace {
constexpr double kImportSeconds = 300;              // importing JAX, the file, and tracing
constexpr std::size_t kMaxAnswerBytes = 64u << 20;  // the case file limit
}  // namespace

KernelImporter::KernelImporter(std::string python, std::string root)
    : jax_(JaxPython::resolve(std::move(python), std::move(root))) {}

std::string KernelImporter::unavailable() const {
  return jax_.unavailable("cfjax_import.py", "importer");
}

KernelImport KernelImporter::run(const KernelImportRequest& req) const {
  KernelImport out;
  process::ChildProcess child;
  std::string why;
  if (!child.spawn({jax_.python, jax_.script("cfjax_import.py"), req.file, req.name, req.arch,
                    req.profile, req.jax},
                   -1, why)) {
    out.error = "cannot start the importer (" + jax_.python + "): " + why;
    return out;
  }
  std::string line;
  const auto r = child.read_line(kImportSeconds, kMaxAnswerBytes, line);
  if (r != process::ChildProcess::Read::kLine) {
    out.error = r == process::ChildProcess::Read::kTimeout
                    ? "the importer gave no answer within " +
                          std::to_string(static_cast<int>(kImportSeconds)) + " s"
                    : "the importer ended without an answer (" + jax_.python + ")";
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
