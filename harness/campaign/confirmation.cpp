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
                     const std::string& executor, std::int64_t repeats) {
  Confirmation out;
  for (std::int64_t k = 0; k < repeats; ++k) {
    ++out.reruns;
    const auto ms = check.mismatches(c, nullptr, std::nullopt, &executor);
    for (const auto& m : ms) {
      if (m.signature == signature) {
        ++out.repeated;
        break;
      }
    }
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

std::size_t append_flaky_summary(const std::filesystem::path& out) {
  std::error_code ec;
  std::map<std::string, std::vector<nlohmann::json>> by_signature;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(out / "flaky", ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("signature")) continue;
    j.erase("case");
    j["file"] = e.path().filename().string();
    by_signature[j["signature"].get<std::string>()].push_back(std::move(j));
    ++n;
  }
  if (n == 0) return 0;
  nlohmann::json list = nlohmann::json::array();
  std::ostringstream md;
  md << "\n## Flaky disagreements (not findings)\n\n"
     << "A disagreement of a nondeterministic executor that did not repeat on every rerun. Each "
        "record is under flaky/.\n\n| signature | occurrences | reruns that repeated it "
        "|\n|---|---|---|\n";
  for (const auto& [signature, records] : by_signature) {
    std::string counts;
    for (const auto& r : records) {
      counts += (counts.empty() ? "" : ", ") +
                std::to_string(r["confirmation"]["repeated"].get<std::int64_t>()) + "/" +
                std::to_string(r["confirmation"]["reruns"].get<std::int64_t>());
      list.push_back(r);
    }
    md << "| `" << signature << "` | " << records.size() << " | " << counts << " |\n";
  }
  if (std::filesystem::exists(out / "summary.json", ec)) {
    std::ifstream in(out / "summary.json");
    nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
    if (!summary.is_discarded()) {
      summary["flaky"] = list;
      write_file_atomically(out / "summary.json", summary.dump(2) + "\n");
    }
  }
  if (std::filesystem::exists(out / "summary.md", ec)) {
    std::ifstream in(out / "summary.md");
    std::stringstream text;
    text << in.rdbuf();
    write_file_atomically(out / "summary.md", text.str() + md.str());
  }
  return n;
}

}  // namespace collfuzz::campaign
