// The byte oracle: per CTA and barrier, the arrivals, bytes armed and received, phases, and
// whether each wait completed.
#include "oracles/op_kinds.h"
#include "oracles/oracles.h"

namespace collfuzz {
namespace {

const CtaRecord* find_cta(const Outcome& o, std::int64_t rank) {
  for (const auto& c : o.ctas) {
    if (c.rank == rank) return &c;
  }
  return nullptr;
}

const BarrierRecord* find_barrier(const CtaRecord& c, const std::string& alloc,
                                  std::int64_t index) {
  for (const auto& b : c.barriers) {
    if (b.alloc == alloc && b.index == index) return &b;
  }
  return nullptr;
}

std::string where(std::int64_t rank, const BarrierRecord& b) {
  return "CTA " + std::to_string(rank) + " barrier " + b.alloc + "[" + std::to_string(b.index) +
         "]";
}

std::string num(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "?"; }

// Classifies a disagreement on bytes: the actual barrier would hang, over-completes, or moves
// bytes the reference never puts there.
const char* byte_kind(const BarrierRecord& e, const BarrierRecord& a) {
  const std::int64_t ea = e.armed.value_or(0), er = e.received.value_or(0);
  const std::int64_t aa = a.armed.value_or(0), ar = a.received.value_or(0);
  if (ea == 0 && er == 0) return "wrong_barrier";
  if (aa > ar && ea == er) return "would_hang";
  if (ar > aa && er <= ea) return "over_completion";
  return "byte_count";
}

}  // namespace

void byte_oracle(const Case& c, const Outcome& expected, const Outcome& actual, Verdict& v) {
  if (!expected.accepted() || !actual.accepted()) return;
  const bool exp_done = expected.kind == OutcomeKind::kCompleted;
  const bool act_done = actual.kind == OutcomeKind::kCompleted;
  ++v.compared;
  if (exp_done != act_done) {
    add_mismatch(
        v, "bytes", exp_done ? "hang" : "unexpected_completion", "kernel",
        std::string("expected ") + to_string(expected.kind) + ", got " + to_string(actual.kind));
  }
  for (const CtaRecord& ec : expected.ctas) {
    const CtaRecord* ac = find_cta(actual, ec.rank);
    if (!ac) {
      v.unobserved += static_cast<int>(ec.barriers.size() + ec.waits.size());
      continue;
    }
    for (const BarrierRecord& eb : ec.barriers) {
      const BarrierRecord* ab = find_barrier(*ac, eb.alloc, eb.index);
      const std::string what = op_kind_for_barrier(c, eb.alloc);
      if (!ab) {
        ++v.unobserved;
        continue;
      }
      auto field = [&](const std::optional<std::int64_t>& e, const std::optional<std::int64_t>& a) {
        if (!e) return true;
        if (!a) {
          ++v.unobserved;
          return true;
        }
        ++v.compared;
        return *e == *a;
      };
      // Both fields are compared (and counted) whatever the first gives: no short circuit.
      const bool armed_ok = field(eb.armed, ab->armed);
      const bool received_ok = field(eb.received, ab->received);
      const bool bytes_ok = armed_ok && received_ok;
      if (!bytes_ok) {
        add_mismatch(v, "bytes", byte_kind(eb, *ab), what,
                     where(ec.rank, eb) + ": expected armed " + num(eb.armed) + " received " +
                         num(eb.received) + ", got armed " + num(ab->armed) + " received " +
                         num(ab->received));
      }
      if (!field(eb.count, ab->count)) {
        add_mismatch(
            v, "bytes", "count", what,
            where(ec.rank, eb) + ": expected count " + num(eb.count) + ", got " + num(ab->count));
      }
      if (!field(eb.arrivals, ab->arrivals)) {
        add_mismatch(v, "bytes", "arrivals", what,
                     where(ec.rank, eb) + ": expected " + num(eb.arrivals) + " arrivals, got " +
                         num(ab->arrivals));
      }
      if (!field(eb.phases, ab->phases)) {
        add_mismatch(v, "bytes", "phases", what,
                     where(ec.rank, eb) + ": expected " + num(eb.phases) + " phases, got " +
                         num(ab->phases));
      }
      const bool pending_ok = field(eb.pending, ab->pending);
      const bool tx_ok = field(eb.tx, ab->tx);
      const bool state_ok = pending_ok && tx_ok;
      if (!state_ok) {
        add_mismatch(v, "bytes", "final_state", what,
                     where(ec.rank, eb) + ": expected pending " + num(eb.pending) + " tx " +
                         num(eb.tx) + ", got pending " + num(ab->pending) + " tx " + num(ab->tx));
      }
    }
    // Bytes on a barrier the reference never touches.
    for (const BarrierRecord& ab : ac->barriers) {
      if (find_barrier(ec, ab.alloc, ab.index)) continue;
      if (ab.armed.value_or(0) != 0 || ab.received.value_or(0) != 0) {
        add_mismatch(v, "bytes", "wrong_barrier", op_kind_for_barrier(c, ab.alloc),
                     where(ec.rank, ab) + ": bytes on a barrier the reference does not allocate");
      }
    }
    for (const WaitRecord& ew : ec.waits) {
      const WaitRecord* aw = nullptr;
      for (const auto& w : ac->waits) {
        if (w.thread == ew.thread && w.op == ew.op && w.phase == ew.phase &&
            w.barrier == ew.barrier)
          aw = &w;
      }
      if (!aw) {
        if (!ac->waits.empty()) {
          add_mismatch(v, "bytes", "wait", ew.barrier,
                       "CTA " + std::to_string(ec.rank) + " thread " + std::to_string(ew.thread) +
                           ": no record of the wait at " + ew.op);
        } else {
          ++v.unobserved;
        }
        continue;
      }
      ++v.compared;
      if (aw->completed != ew.completed) {
        add_mismatch(v, "bytes", ew.completed ? "wait_hangs" : "wait_passes",
                     ew.barrier == "block_sync" ? "block_sync" : "barrier_wait",
                     "CTA " + std::to_string(ec.rank) + " thread " + std::to_string(ew.thread) +
                         " wait at " + ew.op + " on " + ew.barrier + " (phase " +
                         std::to_string(ew.phase) + "): expected " +
                         (ew.completed ? "to complete" : "to hang"));
      }
    }
  }
}

}  // namespace collfuzz
