// The campaign's timeline, for `collfuzz report`: <out>/timeline.jsonl, one JSON line appended
// every few seconds by the supervising process (and one at the end): the elapsed seconds over
// every run of the campaign, the cases run, cases/s since the previous line, the rules hit so far,
// the findings, and the executors and shard that ran them; and per executor ("per_executor"),
// the stream cases of this run it compared with the reference, its compared cases/s since the
// previous line, and the rules whose predicted diagnostics reached it. Appending keeps what a
// killed campaign wrote; a reader skips a last line cut short.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/progress_display.h"
#include "harness/campaign/shard.h"

namespace collfuzz::campaign {

class TimelineWriter {
 public:
  // `earlier_seconds`, `earlier_cases`: a resumed campaign's counts before this run.
  TimelineWriter(std::filesystem::path file, std::vector<std::string> executors, Shard shard,
                 double earlier_seconds, std::int64_t earlier_cases, double every_seconds = 2.0);

  // Appends a line when `every_seconds` have passed since the last one (or `force`).
  void record(const ProgressSnapshot& s, bool force = false);

 private:
  std::filesystem::path file_;
  std::vector<std::string> executors_;
  Shard shard_;
  double earlier_seconds_;
  std::int64_t earlier_cases_;
  double every_;
  std::optional<double> last_seconds_;
  std::int64_t last_cases_ = 0;
  std::map<std::string, std::int64_t> last_compared_;  // per executor, at the last line
};

}  // namespace collfuzz::campaign
