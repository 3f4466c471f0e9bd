#include "harness/runner/baseline.h"

#include "harness/core/bounded_json_reader.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

Baseline Baseline::load(const std::filesystem::path& file) {
  const nlohmann::json j = load_json_file(file);
  const std::string root = file.string() + ":$";
  jr::object(j, root, {"format", "divergences"});
  jr::integer(jr::required(j, root, "format"), root + ".format", 1, 1);
  const nlohmann::json& list = jr::required(j, root, "divergences");
  jr::array(list, root + ".divergences", 100000);
  Baseline b;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = jr::index_path(root + ".divergences", i);
    jr::object(list[i], p,
               {"case", "executor", "signature", "jax_version", "reason", "spec_section"});
    KnownDivergence d;
    d.case_name = jr::string(jr::required(list[i], p, "case"), p + ".case", 256);
    d.executor = jr::string(jr::required(list[i], p, "executor"), p + ".executor", 64);
    d.signature = jr::string(jr::required(list[i], p, "signature"), p + ".signature", 512);
    if (const auto* v = jr::member(list[i], "jax_version"))
      d.jax_version = jr::string(*v, p + ".jax_version", 64);
    d.reason = jr::string(jr::required(list[i], p, "reason"), p + ".reason", 4096);
    if (const auto* s = jr::member(list[i], "spec_section"))
      d.spec_section = jr::string(*s, p + ".spec_section", 64);
    b.entries_.push_back(std::move(d));
  }
  return b;
}

std::vector<const KnownDivergence*> Baseline::entries(const std::string& case_name,
                                                      const std::string& executor) const {
  std::vector<const KnownDivergence*> out;
  for (const auto& d : entries_) {
    if (d.executor == executor && (d.case_name == "*" || d.case_name == case_name))
      out.push_back(&d);
  }
  return out;
}

}  // namespace collfuzz
