// Known JAX bugs (ci/known-jax-bugs.json, docs/jax-divergences.md "Known JAX bugs"): bugs in JAX
// that collfuzz found and documented, each with a corpus case, the releases it was seen in and a
// link. A campaign matches every disagreement against the list: one whose executor is listed and
// whose detail (the executor's exception and message, as the oracle wrote it) matches the
// entry's pattern is counted as known, with its entry, never reported as a new finding.
// Unlike the known-divergence baseline (baseline.h, matched by signature), an entry is matched by
// the message: `std::bad_cast` is one bug whatever rule the reference expected there.
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace collfuzz {

struct KnownJaxBug {
  std::string id;       // stable: what summaries and findings name
  std::string summary;  // one line: what JAX does wrong
  std::string pattern;  // ECMAScript regex, searched in the mismatch's detail
  std::regex compiled;
  std::vector<std::string> executors;  // jax-lower, jax-ir, jax-interpret, ...
  std::vector<std::string> jax;        // the releases it was seen in
  std::string corpus_case;             // the case that shows it (a path in the repository)
  std::string link;                    // where it is written up (a file or an issue URL)

  // "known JAX bug ID (releases R): SUMMARY; CASE; LINK": the reason a campaign records.
  std::string reason() const;
};

class KnownJaxBugs {
 public:
  KnownJaxBugs() = default;
  // Throws InputError naming the file and the JSON path of the first problem (a bad regex too).
  static KnownJaxBugs load(const std::filesystem::path& file);

  // The first entry for `executor` whose pattern occurs in `detail`; null when none.
  const KnownJaxBug* match(const std::string& executor, const std::string& detail) const;
  const std::vector<KnownJaxBug>& all() const { return bugs_; }
  bool empty() const { return bugs_.empty(); }

 private:
  std::vector<KnownJaxBug> bugs_;
};

}  // namespace collfuzz
