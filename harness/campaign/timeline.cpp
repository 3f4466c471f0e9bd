#include "harness/campaign/timeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace collfuzz::campaign {

TimelineWriter::TimelineWriter(std::filesystem::path file, std::vector<std::string> executors,
                               Shard shard, double earlier_seconds, std::int64_t earlier_cases,
                               double every_seconds)
    : file_(std::move(file)),
      executors_(std::move(executors)),
      shard_(std::move(shard)),
      earlier_seconds_(earlier_seconds),
      earlier_cases_(earlier_cases),
      every_(every_seconds) {}

void TimelineWriter::record(const ProgressSnapshot& s, bool force) {
  if (!force && last_seconds_ && s.seconds - *last_seconds_ < every_) return;
  const double since = s.seconds - last_seconds_.value_or(0.0);
  const std::int64_t cases = s.cases - last_cases_;
  nlohmann::json line{{"seconds", earlier_seconds_ + s.seconds},
                      {"cases", earlier_cases_ + s.cases},
                      {"cases_per_second", since > 0 ? static_cast<double>(cases) / since : 0.0},
                      {"rules_hit", s.rules_hit},
                      {"rules_total", s.rules_total},
                      {"findings", s.findings},
                      {"executors", executors_},
                      {"shard", shard_.text()}};
  nlohmann::json per_executor = nlohmann::json::object();
  for (const auto& e : s.executors) {
    const auto before = last_compared_.find(e.name);
    const std::int64_t delta = e.compared - (before == last_compared_.end() ? 0 : before->second);
    per_executor[e.name] = {
        {"compared", e.compared},
        {"compared_per_second", since > 0 ? static_cast<double>(delta) / since : 0.0},
        {"rules_hit", e.rules_hit}};
    last_compared_[e.name] = e.compared;
  }
  line["per_executor"] = per_executor;
  last_seconds_ = s.seconds;
  last_cases_ = s.cases;
  // One write(2) of a whole line with O_APPEND: a kill leaves at most the last line partial.
  const std::string text = line.dump() + "\n";
  const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the timeline is for the report; the campaign goes on without it
  [[maybe_unused]] const auto n = ::write(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace collfuzz::campaign
