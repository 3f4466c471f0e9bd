#include "harness/campaign/finding_repro.h"

#include <exception>

#include "harness/executors/gpu_presence.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/repro_script.h"

namespace collfuzz::campaign {

namespace {

ReproMode mode_of_signature(const std::string& signature) {
  return repro_mode_for(signature.substr(signature.rfind(':') + 1), no_gpu_reason().empty());
}

}  // namespace

ReproMode repro_mode_for(const std::string& executor, bool machine_has_gpu) {
  if (executor == "jax-interpret") return ReproMode::kInterpret;
  if (executor == "jax-lower" || executor == "jax-ir") return ReproMode::kLower;
  if (executor == "jax-gpu" || executor == "cuda") return ReproMode::kGpu;
  return machine_has_gpu ? ReproMode::kGpu : ReproMode::kInterpret;
}

void write_finding_repro(const std::filesystem::path& dir, const std::string& stem,
                         const std::string& signature, const Case& c) {
  const ReproMode mode = mode_of_signature(signature);
  std::string why;
  try {
    ReproGenerator gen("", "");
    why = gen.unavailable();
    if (why.empty()) {
      const ReproScript s =
          gen.generate(c, mode, "collfuzz repro " + stem + ".json --mode " + to_string(mode));
      if (!s.error.empty()) {
        why = s.error;
      } else {
        write_file_atomically(dir / (stem + ".py"), s.script);
        std::error_code ec;
        std::filesystem::remove(dir / (stem + ".repro.txt"), ec);
        return;
      }
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  try {
    write_file_atomically(dir / (stem + ".repro.txt"),
                          "No JAX script was written for this finding: " + why +
                              "\nWrite it later with: collfuzz repro " + stem + ".json --mode " +
                              to_string(mode) + " -o " + stem + ".py\n");
  } catch (const std::exception&) {
    // The finding's own files are written; a note that cannot be is not worth failing for.
  }
}

}  // namespace collfuzz::campaign
