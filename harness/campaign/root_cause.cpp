#include "harness/campaign/root_cause.h"

#include <array>
#include <string_view>

#include "oracles/oracles.h"
#include "oracles/reference/rules.h"

namespace collfuzz::campaign {
namespace {

// The rule the executor's diagnostic names: its own rule id, else the rule whose template its
// message matches (as the diagnostic oracle names it); empty when none does, or for an empty
// message (a bare assert names no rule).
std::string executor_rule(const Outcome& actual) {
  if (actual.kind != OutcomeKind::kRejected || !actual.diagnostic) return {};
  const Diagnostic& d = *actual.diagnostic;
  if (!d.rule.empty()) return d.rule;
  const std::string msg = normalize_message(d.message);
  if (msg.empty()) return {};
  const Rule* r = match_rule(d.exception, msg, actual.profile, d.stage);
  return r ? std::string(r->name) : std::string();
}

// How far upstream a mismatch is: lower is nearer the cause.
int upstream_rank(const Mismatch& m) {
  if (m.oracle == "crash" || m.oracle == "executor") return 0;
  if (m.oracle == "diagnostic") return 1;
  if (m.oracle == "bytes") {
    static constexpr std::array<std::pair<std::string_view, int>, 12> kBytes = {{
        {"count", 2},
        {"byte_count", 3},
        {"over_completion", 3},
        {"would_hang", 3},
        {"wrong_barrier", 3},
        {"arrivals", 4},
        {"phases", 5},
        {"final_state", 5},
        {"wait", 7},
        {"wait_hangs", 7},
        {"wait_passes", 7},
        {"hang", 8},
    }};
    for (const auto& [kind, rank] : kBytes) {
      if (m.kind == kind) return rank;
    }
    return 8;
  }
  if (m.oracle == "memory") return m.kind == "data" ? 6 : 9;
  return 10;
}

// The byte oracle's kinds for the bytes armed or received on a barrier (byte_kind() names the
// direction: one quantity).
bool armed_or_received(const std::string& kind) {
  return kind == "byte_count" || kind == "over_completion" || kind == "would_hang" ||
         kind == "wrong_barrier";
}

// copy, copy_multicast, copy_partitioned, copy_replicated: one family (a bug in arming or
// delivering bytes shows through whichever copy kind the case happens to use).
std::string op_family(const std::string& what) {
  if (what == "copy" || what == "copy_multicast" || what == "copy_partitioned" ||
      what == "copy_replicated")
    return "copy";
  return what;
}

// The checks a disagreeing rule stands with: its family (the rule id's first part, the JAX
// function or pass that holds the check: launch_context, lower, interpret, run, ...) and the spec
// section that states it, as "<family>@<section>". Checks of one family in one section read the
// same values in one place (LaunchContext's checks of section 3.3 read the chunk shape), so one
// wrong value fails whichever of them a case reaches. A name that is no rule is kept as it is.
std::string checks_of(const std::string& rule) {
  const Rule* r = find_rule(rule);
  if (!r) return rule;
  const std::string name(r->name);
  return name.substr(0, name.find('.')) + "@" + std::string(r->section);
}

// Undefined behaviour an executor meets where the reference predicts a defined run, as the
// quantity it corrupts gone out of range (root_cause.h); empty for a code without one.
std::string undefined_as_quantity(const std::string& code, const std::string& executor) {
  if (code == "multicast_outside_cluster")
    return make_signature("bytes", "tx_bytes", "copy", executor);
  if (code == "cluster_arrival_outside_cluster")
    return make_signature("bytes", "arrivals", "barrier_arrive", executor);
  if (code == "mbarrier_init_count")
    return make_signature("bytes", "count", "barrier_arrive", executor);
  return {};
}

}  // namespace

std::string root_cause_group(const std::vector<Mismatch>& ms, const Outcome& actual,
                             const std::string& executor) {
  const Mismatch* first = nullptr;
  for (const auto& m : ms) {
    if (!first || upstream_rank(m) < upstream_rank(*first)) first = &m;
  }
  if (!first) return {};
  const Mismatch& m = *first;
  if (m.oracle == "diagnostic") {
    // The rule whose check disagrees: the reference's when the executor accepts, else the
    // executor's own (the one it fires where it should not, or fires differently).
    std::string rule = m.kind == "accepted_not_rejected" ? m.what : executor_rule(actual);
    if (rule.empty())
      rule = m.kind == "rejected_not_accepted" || m.kind == "rule" ? "unknown" : m.what;
    return make_signature("diagnostic", "check", checks_of(rule), executor);
  }
  if (m.oracle == "bytes" && armed_or_received(m.kind))
    return make_signature("bytes", "tx_bytes", op_family(m.what), executor);
  if (m.oracle == "memory" && m.kind == "output")
    return make_signature("memory", "data", "copy", executor);
  if (m.oracle == "bytes" || m.oracle == "memory")
    return make_signature(m.oracle, m.kind, op_family(m.what), executor);
  if (m.oracle == "undefined" && m.kind == "behaviour") {
    if (std::string q = undefined_as_quantity(m.what, executor); !q.empty()) return q;
  }
  return m.signature;
}

}  // namespace collfuzz::campaign
