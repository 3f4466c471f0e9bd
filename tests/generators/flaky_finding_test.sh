#!/bin/bash
# Confirmation (issue 11): a disagreement of a nondeterministic executor is rerun --confirm times
# before it is reported. The fake external executor (tests/process/fake_executor.py) stands in
# for jax-interpret:
#  - in mode `flip` it answers the same case differently from one run to the next: every
#    disagreement is reported as flaky (under flaky/, in summary.md and summary.json), never as
#    a finding;
#  - in mode `reject` it always answers the same: its disagreements are findings, each with its
#    confirmation counts (5 of 5).
# Usage: flaky_finding_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"

FAKE_EXECUTOR_MODE=flip "$collfuzz" fuzz --executors sim,jax-interpret \
  --confirm-executors jax-interpret --seconds 8 --jobs 1 --out "$work/flip" > "$work/log" 2>&1
python3 - "$work/flip" << 'PY' || fail "flip: the nondeterministic disagreement was not reported as flaky only"
import glob, json, os, sys
out = sys.argv[1]
flaky = [json.load(open(f)) for f in glob.glob(os.path.join(out, "flaky", "*.json"))]
assert flaky, "no flaky record"
for r in flaky:
    c = r["confirmation"]
    # The first rerun that does not repeat ends the confirmation.
    assert 1 <= c["reruns"] <= 5 and c["repeated"] == c["reruns"] - 1 and c["flaky"], r
    assert r["executor"] == "jax-interpret", r
found = glob.glob(os.path.join(out, "findings", "*jax-interpret*.outcomes.json"))
assert not found, found
s = json.load(open(os.path.join(out, "summary.json")))
assert len(s["flaky"]) == len(flaky), s.get("flaky")
assert "Flaky disagreements" in open(os.path.join(out, "summary.md")).read()
print(f"flip: {len(flaky)} flaky records, 0 jax-interpret findings")
PY

FAKE_EXECUTOR_MODE=reject "$collfuzz" fuzz --executors sim,jax-interpret --no-shrink \
  --confirm-executors jax-interpret --seconds 8 --jobs 1 --out "$work/reject" > "$work/log" 2>&1
python3 - "$work/reject" << 'PY' || fail "reject: the repeating disagreement was not a confirmed finding"
import glob, json, os, sys
out = sys.argv[1]
found = glob.glob(os.path.join(out, "findings", "*jax-interpret*.outcomes.json"))
assert found, "no finding"
for f in found:
    c = json.load(open(f))["confirmation"]
    assert c == {"reruns": 5, "repeated": 5, "flaky": False}, c
assert not glob.glob(os.path.join(out, "flaky", "*.json"))
print(f"reject: {len(found)} confirmed findings (5/5), 0 flaky")
PY
