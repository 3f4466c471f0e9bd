#include "harness/runner/known_jax_bugs.h"

#include <algorithm>
#include <set>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

namespace {

std::vector<std::string> strings(const nlohmann::json& j, const std::string& path) {
  jr::array(j, path, 64);
  if (j.empty()) throw InputError(path, "needs at least one entry");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i)
    out.push_back(jr::string(j[i], jr::index_path(path, i), 64));
  return out;
}

}  // namespace

std::string KnownJaxBug::reason() const {
  std::string releases;
  for (const auto& v : jax) releases += (releases.empty() ? "" : ", ") + v;
  return "known JAX bug " + id + " (JAX " + releases + "): " + summary + "; case " + corpus_case +
         "; " + link;
}

KnownJaxBugs KnownJaxBugs::load(const std::filesystem::path& file) {
  const nlohmann::json j = load_json_file(file);
  const std::string root = file.string() + ":$";
  jr::object(j, root, {"format", "bugs"});
  jr::integer(jr::required(j, root, "format"), root + ".format", 1, 1);
  const nlohmann::json& list = jr::required(j, root, "bugs");
  jr::array(list, root + ".bugs", 10000);
  KnownJaxBugs out;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = jr::index_path(root + ".bugs", i);
    jr::object(list[i], p, {"id", "summary", "pattern", "executors", "jax", "case", "link"});
    KnownJaxBug b;
    b.id = jr::identifier(jr::required(list[i], p, "id"), p + ".id");
    if (!ids.insert(b.id).second)
      throw InputError(p + ".id", "the id \"" + b.id + "\" is listed twice");
    b.summary = jr::string(jr::required(list[i], p, "summary"), p + ".summary", 1024);
    b.pattern = jr::string(jr::required(list[i], p, "pattern"), p + ".pattern", 1024);
    if (b.pattern.empty()) throw InputError(p + ".pattern", "an empty pattern matches everything");
    try {
      b.compiled = std::regex(b.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw InputError(p + ".pattern", std::string("not a regular expression: ") + e.what());
    }
    b.executors = strings(jr::required(list[i], p, "executors"), p + ".executors");
    b.jax = strings(jr::required(list[i], p, "jax"), p + ".jax");
    b.corpus_case = jr::string(jr::required(list[i], p, "case"), p + ".case", 512);
    b.link = jr::string(jr::required(list[i], p, "link"), p + ".link", 1024);
    out.bugs_.push_back(std::move(b));
  }
  return out;
}

const KnownJaxBug* KnownJaxBugs::match(const std::string& executor,
                                       const std::string& detail) const {
  for (const auto& b : bugs_) {
    if (std::find(b.executors.begin(), b.executors.end(), executor) == b.executors.end()) continue;
    if (std::regex_search(detail, b.compiled)) return &b;
  }
  return nullptr;
}

}  // namespace collfuzz
