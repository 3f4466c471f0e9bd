#include "harness/campaign/confirmation.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "harness/campaign/findings_store.h"
#include "harness/core/case_json.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::campaign {

bool needs_confirmation(const std::string& executor, const Case& c, const ConfirmPolicy& policy) {
  if (policy.repeats <= 0) return false;
  const auto& always = policy.always_nondeterministic;
  if (std::find(always.begin(), always.end(), executor) != always.end()) return true;
  if (executor == "jax-gpu" || executor == "cuda") return true;
  // Interpret mode runs Pallas threads, and the CTAs of a cluster, as Python threads: their
  // interleaving is not fixed (which CTA's run-time error surfaces first, for one).
  std::int64_t cluster_ctas = 1;
  for (const std::int64_t d : c.mesh.cluster) cluster_ctas *= d;
  return executor == "jax-interpret" && (c.mesh.num_threads.value_or(1) > 1 || cluster_ctas > 1);
}

nlohmann::json Confirmation::to_json() const {
  return {{"reruns", reruns}, {"repeated", repeated}, {"flaky", flaky()}};
}

std::string signature_executor(const std::string& signature) {
  return signature.substr(signature.rfind(':') + 1);
}

Confirmation confirm(CaseCheck& check, const Case& c, const std::string& signature,
                     const std::string& executor, std::int64_t repeats,
                     const std::function<void()>& before_rerun) {
  Confirmation out;
  for (std::int64_t k = 0; k < repeats; ++k) {
    if (before_rerun) before_rerun();
    ++out.reruns;
    const auto ms = check.mismatches(c, nullptr, std::nullopt, &executor);
    const bool repeated = std::any_of(ms.begin(), ms.end(),
                                      [&](const Mismatch& m) { return m.signature == signature; });
    if (!repeated) break;  // flaky already: the reruns left would only refine the count
    ++out.repeated;
  }
  return out;
}

void record_flaky(const std::filesystem::path& out, const std::string& signature,
                  std::uint64_t seed, std::uint64_t index, const Case& c,
                  const Confirmation& confirmation) {
  std::filesystem::create_directories(out / "flaky");
  nlohmann::json j;
  j["signature"] = signature;
  j["executor"] = signature_executor(signature);
  j["seed"] = seed;
  j["index"] = index;
  j["confirmation"] = confirmation.to_json();
  j["case"] = case_to_json(c);
  write_file_atomically(
      out / "flaky" / (FindingsStore::slug(signature) + "-" + std::to_string(index) + ".json"),
      j.dump(2) + "\n");
}

nlohmann::json load_flaky(const std::filesystem::path& out) {
  std::error_code ec;
  std::map<std::string, nlohmann::json> by_file;  // sorted: the same list on every machine
  for (const auto& e : std::filesystem::directory_iterator(out / "flaky", ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("signature") ||
        !j["signature"].is_string())
      continue;
    j.erase("case");
    j["file"] = e.path().filename().string();
    by_file[j["signature"].get<std::string>() + "\n" + j["file"].get<std::string>()] = j;
  }
  nlohmann::json list = nlohmann::json::array();
  for (auto& [key, j] : by_file) list.push_back(std::move(j));
  return list;
}

}  // namespace collfuzz::campaign
