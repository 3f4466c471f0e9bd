#include "harness/campaign/progress_display.h"

#include <cstdio>

namespace collfuzz::campaign {

ProgressDisplay::ProgressDisplay(std::ostream& out, bool terminal)
    : out_(out), terminal_(terminal) {}

std::string ProgressDisplay::format(const ProgressSnapshot& s) {
  char buf[256];
  const double rate = s.seconds > 0 ? static_cast<double>(s.cases) / s.seconds : 0;
  std::snprintf(buf, sizeof buf,
                "[%7.1fs] %lld cases (%.0f/s), %lld findings, %zu/%zu rules hit, %lld workers%s",
                s.seconds, static_cast<long long>(s.total_cases), rate,
                static_cast<long long>(s.findings), s.rules_hit, s.rules_total,
                static_cast<long long>(s.workers),
                s.crashes ? (", " + std::to_string(s.crashes) + " worker crashes").c_str() : "");
  std::string line = buf;
  if (!s.waiting.empty()) line += ", waiting on " + s.waiting;
  return line;
}

void ProgressDisplay::update(const ProgressSnapshot& s) {
  const auto now = std::chrono::steady_clock::now();
  const auto period = terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
  if (now - last_ < period) return;
  last_ = now;
  if (terminal_) {
    out_ << "\r\033[K" << format(s) << std::flush;
  } else {
    out_ << format(s) << "\n" << std::flush;
  }
}

void ProgressDisplay::finish(const ProgressSnapshot& s) {
  if (terminal_) out_ << "\r\033[K";
  out_ << format(s) << "\n" << std::flush;
}

}  // namespace collfuzz::campaign
