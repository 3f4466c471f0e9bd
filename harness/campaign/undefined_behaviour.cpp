#include "harness/campaign/undefined_behaviour.h"

#include <string_view>

namespace collfuzz::campaign {
namespace {

// The simulator's reason for a run that met undefined behaviour (harness/sim).
constexpr std::string_view kUndefinedPrefix = "undefined behaviour";

// A short name for what the undefined behaviour was.
std::string what_was_undefined(const std::string& reason) {
  if (reason.find("multicast") != std::string::npos) return "multicast_outside_cluster";
  if (reason.find("cluster-barrier") != std::string::npos) return "cluster_arrival_outside_cluster";
  if (reason.find("mbarrier.init") != std::string::npos) return "mbarrier_init_count";
  return "other";
}

}  // namespace

std::optional<Mismatch> undefined_behaviour_mismatch(const Outcome& expected, const Outcome& actual,
                                                     const std::string& executor) {
  if (actual.kind != OutcomeKind::kUnavailable || !actual.reason.starts_with(kUndefinedPrefix))
    return std::nullopt;
  if (expected.kind == OutcomeKind::kUnavailable || expected.kind == OutcomeKind::kCrash)
    return std::nullopt;
  Mismatch m;
  m.oracle = "undefined";
  m.kind = "behaviour";
  m.what = what_was_undefined(actual.reason);
  m.detail = std::string("the reference predicts ") + to_string(expected.kind) +
             "; the executor met " + actual.reason;
  m.signature = make_signature(m.oracle, m.kind, m.what, executor);
  return m;
}

std::string unavailable_reason_class(const std::string& reason) {
  std::string out;
  for (std::size_t i = 0; i < reason.size() && out.size() < 160; ++i) {
    const char ch = reason[i];
    if (ch >= '0' && ch <= '9') {
      if (out.empty() || out.back() != 'N') out += 'N';
      while (i + 1 < reason.size() && reason[i + 1] >= '0' && reason[i + 1] <= '9') ++i;
    } else {
      out += ch == '\n' ? ' ' : ch;
    }
  }
  return out;
}

}  // namespace collfuzz::campaign
