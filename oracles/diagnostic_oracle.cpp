// The diagnostic oracle: do the two outcomes agree on rejecting the case, and on how?
#include <algorithm>
#include <regex>

#include "harness/core/message_regex.h"
#include "harness/core/stage_names.h"
#include "oracles/oracles.h"
#include "oracles/reference/rules.h"

namespace collfuzz {

std::optional<DiagnosticLevel> parse_diagnostic_level(std::string_view s) {
  if (s == "verdict") return DiagnosticLevel::kVerdict;
  if (s == "rule") return DiagnosticLevel::kRule;
  if (s == "message") return DiagnosticLevel::kMessage;
  return std::nullopt;
}

std::string normalize_message(const std::string& message) {
  // Process-specific parts: object addresses and Python id()s of interpret-mode barriers.
  // Most messages have neither: skip the regular expressions (a campaign compares every case).
  const bool address = message.find("<object object at 0x") != std::string::npos;
  bool barrier_id = false;
  for (std::size_t at = message.find("barrier "); at != std::string::npos && !barrier_id;
       at = message.find("barrier ", at + 1)) {
    barrier_id = at + 8 < message.size() && message[at + 8] >= '0' && message[at + 8] <= '9';
  }
  if (!address && !barrier_id) return message;
  static const std::regex kAddress("<object object at 0x[0-9a-fA-F]+>");
  static const std::regex kBarrierId("\\bbarrier [0-9]+\\b");
  return std::regex_replace(std::regex_replace(message, kAddress, "<object object at 0x...>"),
                            kBarrierId, "barrier <id>");
}

namespace {

std::string describe(const Outcome& o) {
  if (o.kind != OutcomeKind::kRejected) return to_string(o.kind);
  const Diagnostic& d = *o.diagnostic;
  const std::string message = d.message_regex.empty() ? d.message : "/" + d.message_regex + "/";
  return d.exception + " at " + d.stage + ": " + message +
         (d.rule.empty() ? "" : " [" + d.rule + "]");
}

std::string or_alternatives(const Outcome& expected) {
  const Diagnostic& e = *expected.diagnostic;
  if (e.alternatives.empty()) return "";
  if (expected.profile != Profile::kInterpret)
    return " (or one of its " + std::to_string(e.alternatives.size()) +
           " alternatives: the layout search running out of fuel)";
  return " (or one of the " + std::to_string(e.alternatives.size()) +
         " other interleavings' errors)";
}

// Whether `a` is one of the diagnostics `e` lists as alternatives (Diagnostic::alternatives:
// another interleaving's, or the layout search's running out of fuel): the same exception and rule
// (as named or matched), and, at kMessage or for an alternative without a rule, the same message
// with its process-specific parts masked.
bool matches_alternative(const Diagnostic& e, const Diagnostic& a, const std::string& act_rule,
                         DiagnosticLevel level) {
  if (e.alternatives.empty()) return false;
  const std::string am = normalize_message(a.message);
  return std::any_of(e.alternatives.begin(), e.alternatives.end(),
                     [&](const DiagnosticAlternative& alt) {
                       if (alt.exception != a.exception) return false;
                       if (!alt.rule.empty() && alt.rule != act_rule) return false;
                       if (level == DiagnosticLevel::kRule && !alt.rule.empty()) return true;
                       return normalize_message(alt.message) == am;
                     });
}

}  // namespace

void diagnostic_oracle(const Outcome& expected, const Outcome& actual, DiagnosticLevel level,
                       Verdict& v) {
  const bool er = expected.kind == OutcomeKind::kRejected;
  const bool ar = actual.kind == OutcomeKind::kRejected;
  if (!er && !ar) return;
  ++v.compared;
  const std::string exp_rule = er ? expected.diagnostic->rule : "";
  std::string act_rule = ar ? actual.diagnostic->rule : "";
  if (ar && act_rule.empty()) {
    // Executors other than the reference do not know rule ids: name the rule by its template,
    // preferring the expected one where several templates fit.
    const Diagnostic& a = *actual.diagnostic;
    const std::string msg = normalize_message(a.message);
    const Rule* expected_rule = er ? find_rule(exp_rule) : nullptr;
    if (expected_rule && rule_matches(*expected_rule, a.exception, msg)) {
      act_rule = exp_rule;
    } else if (msg.empty()) {
      // An empty message (a bare `assert`) that the expected rule does not explain names no
      // rule: a template without text would match it and lend the signature an unrelated id.
    } else if (const Rule* r = match_rule(a.exception, msg, actual.profile, a.stage)) {
      act_rule = r->name;
    }
  }
  if (er && actual.kind == OutcomeKind::kCompleted && expected.diagnostic->may_complete) {
    // Another interleaving raises no error (Diagnostic::may_complete): a completed run is one of
    // the outcomes the reference allows.
    return;
  }
  if (er != ar) {
    add_mismatch(v, "diagnostic", er ? "accepted_not_rejected" : "rejected_not_accepted",
                 er ? exp_rule : (act_rule.empty() ? "unknown" : act_rule),
                 "expected " + describe(expected) + "; got " + describe(actual));
    return;
  }
  if (level == DiagnosticLevel::kVerdict) return;
  const Diagnostic& e = *expected.diagnostic;
  const Diagnostic& a = *actual.diagnostic;
  if (matches_alternative(e, a, act_rule, level)) {
    // An alternative (Diagnostic::alternatives): as right as the canonical error.
    if (!stage_admits(e.stage, a.stage)) {
      add_mismatch(v, "diagnostic", "stage", exp_rule,
                   "expected stage " + e.stage + ", got " + a.stage);
    }
    return;
  }
  if (exp_rule.empty() && !e.message_regex.empty() && exp_rule != act_rule) {
    // A stored regex that the predicted diagnostic does not fit (complete_stored_rule).
    add_mismatch(v, "diagnostic", "rule", exp_rule,
                 "expected " + e.exception + " with a message matching /" + e.message_regex +
                     "/, got " + describe(actual));
    return;
  }
  if (exp_rule != act_rule) {
    add_mismatch(v, "diagnostic", "rule", exp_rule,
                 "expected rule " + exp_rule + or_alternatives(expected) + ", got " +
                     (act_rule.empty() ? "(no rule)" : act_rule) + ": " + describe(actual));
    return;
  }
  if (e.exception != a.exception) {
    add_mismatch(v, "diagnostic", "exception", exp_rule,
                 "expected " + e.exception + ", got " + a.exception);
    return;
  }
  if (level == DiagnosticLevel::kRule) return;
  if (!e.message_regex.empty()) {
    // assertRaisesRegex: the regex occurs in the message (re.search).
    if (!message_regex_matches(e.message_regex, a.message)) {
      add_mismatch(
          v, "diagnostic", "message", exp_rule,
          "expected a message matching /" + e.message_regex + "/; got \"" + a.message + "\"");
      return;
    }
    if (!stage_admits(e.stage, a.stage)) {
      add_mismatch(v, "diagnostic", "stage", exp_rule,
                   "expected stage " + e.stage + ", got " + a.stage);
    }
    return;
  }
  const Rule* r = find_rule(exp_rule);
  const bool contains = r && r->match == RuleMatch::kContains;
  const std::string em = normalize_message(e.message);
  const std::string am = normalize_message(a.message);
  const bool same = contains ? am.find(em) != std::string::npos : am == em;
  if (!same) {
    add_mismatch(v, "diagnostic", "message", exp_rule,
                 "expected message \"" + e.message + "\"" + or_alternatives(expected) + "; got \"" +
                     a.message + "\"");
    return;
  }
  if (!stage_admits(e.stage, a.stage)) {
    add_mismatch(v, "diagnostic", "stage", exp_rule,
                 "expected stage " + e.stage + ", got " + a.stage);
  }
}

}  // namespace collfuzz
