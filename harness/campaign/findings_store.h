// The findings of a campaign, one per oracle signature, in <out>/findings/: the case file
// (<slug>.json, a valid case whose notes say what was found) and every executor's outcome with the
// oracles' verdicts (<slug>.outcomes.json). A signature is claimed with an exclusive create
// (<slug>.claim) so that one worker process reports it and the others count it; every file is
// written atomically, so a campaign killed at any moment keeps each finding it has reported.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz::campaign {

// What the store knows about one finding (read back from its outcomes file).
struct FindingRecord {
  std::string signature;
  std::string case_file;      // relative to the findings directory
  std::string outcomes_file;  // relative to the findings directory
  nlohmann::json outcomes;    // the whole outcomes file
  // <slug>.reproduced.json: the result of running its script once (finding_repro_run.h); null
  // when it has none (yet).
  nlohmann::json reproduced;
};

class FindingsStore {
 public:
  explicit FindingsStore(std::filesystem::path dir);

  // True when this process may report `signature`: nobody (in any process, in any earlier run of
  // the campaign) has claimed it. Cheap for signatures seen before. Throws DiskFullError (and
  // leaves no claim) when the claim cannot be written.
  bool claim(const std::string& signature);
  // Gives a claim up (its finding could not be written): a later run may report it.
  void unclaim(const std::string& signature);
  // Removes claims without a finding beside them (a process killed, or the disk full, between
  // the claim and the finding's files); returns how many. Only while no other process writes.
  int remove_orphan_claims();

  // Writes the case file and the outcomes file of `signature` (replacing earlier versions).
  void write(const std::string& signature, const Case& c, const nlohmann::json& outcomes);

  std::vector<FindingRecord> load_all() const;

  const std::filesystem::path& dir() const { return dir_; }
  // The file name stem for a signature: readable, unique.
  static std::string slug(const std::string& signature);

 private:
  std::filesystem::path dir_;
  std::set<std::string> seen_;  // claimed here or found claimed
};

}  // namespace collfuzz::campaign
