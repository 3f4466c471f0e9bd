// The campaign's progress: on a terminal, one line rewritten in place a few times a second;
// otherwise (a log, CI) a plain line every few seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace collfuzz::campaign {

struct ProgressSnapshot {
  double seconds = 0;            // wall time of this run
  std::int64_t cases = 0;        // cases run in this run
  std::int64_t total_cases = 0;  // including earlier runs of a resumed campaign
  std::int64_t findings = 0;
  std::size_t rules_hit = 0;
  std::size_t rules_total = 0;
  std::int64_t workers = 0;
  std::int64_t crashes = 0;  // worker processes that died
  std::string waiting;       // what a slow executor has been busy on for long ("" when nothing)
  // Per executor, in this run (executor_tally.h): stream cases compared with the reference, and
  // the rules whose predicted diagnostics reached it. For timeline.jsonl and, at the end, the
  // summary's health checks (rules a profile can fire that never reached a real executor).
  struct ExecutorProgress {
    std::string name;
    std::int64_t compared = 0;
    std::size_t rules_hit = 0;
    std::uint64_t rules_lo = 0;  // bit r: a case whose predicted rule is r reached it (r < 64)
    std::uint64_t rules_hi = 0;  // bit r-64
    bool reached(std::size_t rule) const {
      return ((rule < 64 ? rules_lo : rules_hi) >> (rule % 64)) & 1u;
    }
  };
  std::vector<ExecutorProgress> executors;
};

class ProgressDisplay {
 public:
  ProgressDisplay(std::ostream& out, bool terminal);
  void update(const ProgressSnapshot& s);  // throttled
  void finish(const ProgressSnapshot& s);  // the last line, always printed

  static std::string format(const ProgressSnapshot& s);

 private:
  std::ostream& out_;
  bool terminal_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace collfuzz::campaign
