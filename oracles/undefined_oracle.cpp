// The undefined-behaviour oracle: a run that meets undefined behaviour (outcome kind "undefined",
// harness/core/undefined_behaviour.def) held against the reference's prediction by its code.
#include <algorithm>

#include "oracles/oracles.h"

namespace collfuzz {

std::string describe_undefined(const UndefinedRecord& u) {
  std::string out = to_string(u.code);
  for (const UndefinedBehaviour c : u.also) out += std::string(" or ") + to_string(c);
  if (!u.op.empty()) out += " at " + u.op;
  if (u.cta) out += " on CTA " + std::to_string(*u.cta);
  if (!u.detail.empty()) out += " (" + u.detail + ")";
  return out;
}

bool undefined_oracle(const Outcome& expected, const Outcome& actual, Verdict& v) {
  const bool eu = expected.kind == OutcomeKind::kUndefined && expected.undefined;
  const bool au = actual.kind == OutcomeKind::kUndefined && actual.undefined;
  if (!eu && !au) return false;
  if (eu && au) {
    ++v.compared;
    const auto& also = expected.undefined->also;
    if (expected.undefined->code != actual.undefined->code &&
        std::find(also.begin(), also.end(), actual.undefined->code) == also.end()) {
      const std::string what = to_string(expected.undefined->code);
      add_mismatch(v, "undefined", "other_code", what,
                   "the reference predicts undefined behaviour " +
                       describe_undefined(*expected.undefined) + "; the executor met " +
                       describe_undefined(*actual.undefined));
    }
    return true;
  }
  // One side rejects: the diagnostic oracle says accepted_not_rejected or rejected_not_accepted.
  if (expected.kind == OutcomeKind::kRejected || actual.kind == OutcomeKind::kRejected)
    return false;
  if (eu) {
    // Real hardware may do anything: whatever the executor's run did is not compared, and the
    // verdict is not a pass (counted as skipped, as an unavailable run is).
    v.ran = false;
    v.reason = std::string("not compared: the reference predicts undefined behaviour (") +
               to_string(expected.undefined->code) + "); the executor's " + to_string(actual.kind) +
               " run may be anything";
    return true;
  }
  if (!expected.accepted()) {
    v.ran = false;
    v.reason = std::string("not compared: the reference predicts ") + to_string(expected.kind);
    return true;
  }
  // The reference predicts a defined run and the executor met undefined behaviour: one of the two
  // is wrong.
  ++v.compared;
  const std::string what = to_string(actual.undefined->code);
  add_mismatch(v, "undefined", "behaviour", what,
               std::string("the reference predicts ") + to_string(expected.kind) +
                   "; the executor met " + describe_undefined(*actual.undefined));
  return true;
}

void undefined_where_oracle(const Outcome& stored, const Outcome& predicted, Verdict& v) {
  if (!stored.undefined || !predicted.undefined) return;
  const UndefinedRecord& s = *stored.undefined;
  const UndefinedRecord& p = *predicted.undefined;
  if (s.code != p.code) return;  // undefined_oracle's mismatch
  const bool op_differs = !s.op.empty() && s.op != p.op;
  const bool cta_differs = s.cta && s.cta != p.cta;
  if (!op_differs && !cta_differs) return;
  const std::string what = to_string(s.code);
  add_mismatch(v, "undefined", "where", what,
               "stored " + describe_undefined(s) + "; predicted " + describe_undefined(p));
}

}  // namespace collfuzz
