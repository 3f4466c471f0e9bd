// Known divergences: disagreements between an executor and the reference that are expected
// (JAX's interpret mode diverges from the compiler by design). Replay passes a listed divergence,
// fails an unlisted one, and fails a listed one that no longer happens, so the file stays true
// (docs/jax-divergences.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace collfuzz {

struct KnownDivergence {
  std::string case_name;  // "*" for every case
  std::string executor;
  std::string signature;
  std::string jax_version;
  std::string reason;
  std::string spec_section;
};

class Baseline {
 public:
  Baseline() = default;
  static Baseline load(const std::filesystem::path& file);  // throws InputError

  // The entries for this case and executor.
  std::vector<const KnownDivergence*> entries(const std::string& case_name,
                                              const std::string& executor) const;
  bool empty() const { return entries_.empty(); }
  const std::vector<KnownDivergence>& all() const { return entries_; }

 private:
  std::vector<KnownDivergence> entries_;
};

}  // namespace collfuzz
