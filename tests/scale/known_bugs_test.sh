#!/usr/bin/env bash
# Known JAX bugs (harness/runner/known_jax_bugs.h): a campaign's disagreement whose executor and
# message match an entry of the list is recorded as known with its entry, not as a finding. The
# planted bug unknown_axis_list_not_reversed stands in for a JAX bug (the sim stands in for a JAX
# executor): seed 1 finds lower.copy.unknown_cluster_axis on sim within 3000 cases.
# Usage: known_bugs_test.sh COLLFUZZ_SHARD_MUTANT
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sig='diagnostic:message:lower.copy.unknown_cluster_axis:sim'
fail() { echo "known_bugs_test: $*" >&2; exit 1; }

list() {  # list EXECUTOR: a known-bugs file whose one entry matches the planted bug's message
  cat > "$work/bugs-$1.json" <<JSON
{"format": 1, "bugs": [{"id": "planted_axis_order",
  "summary": "the planted bug: Unknown cluster axis lists the axes in declaration order",
  "pattern": "got \"Unknown cluster axis",
  "executors": ["$1"], "jax": ["0.11.2"], "case": "(planted)", "link": "docs/bug-finding.md"}]}
JSON
  echo "$work/bugs-$1.json"
}

# 1. Without a list it is a finding.
"$bin" 1 unknown_axis_list_not_reversed 0/1 3000 1 "$work/none" > "$work/none.json"
grep -q "\"$sig\"" <(python3 -c "import json,sys; print('\n'.join('\"%s\"' % k for k in json.load(open(sys.argv[1]))['found']))" "$work/none.json") ||
  fail "the planted bug was not found without a list (the test's premise)"

# 2. Listed for its executor: known, with its entry, and not a finding.
COLLFUZZ_KNOWN_BUGS=$(list sim) "$bin" 1 unknown_axis_list_not_reversed 0/1 3000 1 "$work/listed" > "$work/listed.json"
python3 - "$work/listed.json" "$work/listed" "$sig" <<'PY' || fail "listed for sim: see above"
import glob, json, sys
found = json.load(open(sys.argv[1]))["found"]
assert sys.argv[3] not in found, f"still a finding: {sorted(found)}"
records = [json.load(open(f)) for f in glob.glob(sys.argv[2] + "/known/*.outcomes.json")]
mine = [r for r in records if r["signature"] == sys.argv[3]]
assert mine, f"not recorded under known/: {[r['signature'] for r in records]}"
bug = mine[0].get("known_bug", {})
assert bug.get("id") == "planted_axis_order", mine[0]
assert mine[0]["reason"].startswith("known JAX bug planted_axis_order (JAX 0.11.2): "), mine[0]["reason"]
print("known_bugs_test: listed for sim: known, not a finding:", mine[0]["reason"][:80])
PY

# 3. Listed for another executor only: still a finding.
COLLFUZZ_KNOWN_BUGS=$(list jax-lower) "$bin" 1 unknown_axis_list_not_reversed 0/1 3000 1 "$work/other" > "$work/other.json"
python3 -c "import json,sys; f=json.load(open(sys.argv[1]))['found']; sys.exit(0 if sys.argv[2] in f else 1)" \
  "$work/other.json" "$sig" || fail "an entry for jax-lower hid a sim finding"

# 4. A bad list is refused naming the field.
echo '{"format": 1, "bugs": [{"id": "x", "summary": "s", "pattern": "(", "executors": ["sim"], "jax": ["0.11.2"], "case": "c", "link": "l"}]}' > "$work/bad.json"
if out=$(COLLFUZZ_KNOWN_BUGS=$work/bad.json "$bin" 1 unknown_axis_list_not_reversed 0/1 10 1 2>&1); then
  fail "a bad pattern was accepted"
fi
grep -q 'bugs\[0\].pattern' <<<"$out" || fail "the bad pattern's error does not name the field: $out"
echo "known_bugs_test: passed"
