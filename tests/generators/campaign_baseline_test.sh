#!/bin/bash
# Baselines apply to campaigns (issue 11): a divergence listed in --baseline is counted as known
# (summary.json "known", summary.md, a record under known/), never reported as a finding; one not
# listed still is. The fake external executor (tests/process/fake_executor.py, mode `reject`)
# stands in for jax-interpret and disagrees on every case it runs. --slow-jobs 0 and --cases make
# both runs see the same cases; 4,000 cases sampled one in 400 give jax-interpret 10 (the test
# ran 20,000 at the default one in 2,000 until 2026-12-04: 281 s under ASan). A bad baseline is refused (exit 2) naming the file. The fake
# executor's traceback is kept with the finding. In mode `ok` (every run unavailable) the summary
# counts the unavailable runs per executor and reason.
# Usage: campaign_baseline_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"
export FAKE_EXECUTOR_MODE=reject
run() {  # out-dir [flags...]
  local out=$1
  shift
  "$collfuzz" fuzz --executors sim,jax-interpret --no-shrink --confirm 0 --slow-jobs 0 --cases 4000 --slow-every 400 \
    --jobs 1 --out "$out" "$@" > "$work/log" 2>&1
}
run "$work/plain"
python3 - "$work" << 'PY' || fail "no jax-interpret findings to list"
import json, sys
w = sys.argv[1]
s = json.load(open(f"{w}/plain/summary.json"))
sigs = sorted(f["signature"] for f in s["findings"] if f["signature"].endswith(":jax-interpret"))
assert len(sigs) >= 2, sigs
# List all but the last: the last must stay a finding.
entries = [{"case": "*", "executor": "jax-interpret", "signature": g, "reason": "test: known"} for g in sigs[:-1]]
json.dump({"format": 1, "divergences": entries}, open(f"{w}/baseline.json", "w"))
json.dump(sigs, open(f"{w}/sigs.json", "w"))
PY
run "$work/known" --baseline "$work/baseline.json"
python3 - "$work" << 'PY' || fail "the baseline was not applied"
import json, os, sys
w = sys.argv[1]
sigs = json.load(open(f"{w}/sigs.json"))
plain = json.load(open(f"{w}/plain/summary.json"))
s = json.load(open(f"{w}/known/summary.json"))
found = {f["signature"] for f in s["findings"]}
listed, unlisted = set(sigs[:-1]), sigs[-1]
assert not (found & listed), f"listed divergences reported as findings: {found & listed}"
assert unlisted in found, f"the unlisted divergence {unlisted} is not a finding"
known = {k["signature"]: k for k in s["known"]}
assert set(known) == listed, (set(known), listed)
occ = {f["signature"]: f["occurrences"] for f in plain["findings"]}
for g, k in known.items():
    assert k["occurrences"] == occ[g], (g, k["occurrences"], occ[g])
    assert k["reason"] == "test: known", k
    assert os.path.exists(os.path.join(w, "known", k["case_file"])), k["case_file"]
assert s["baseline"].endswith("baseline.json"), s["baseline"]
# The executor's traceback is kept with the finding (its outcome in the outcomes file).
f = next(f for f in s["findings"] if f["signature"] == unlisted)
o = json.load(open(os.path.join(w, "known", f["outcomes_file"])))
tb = [e["outcome"].get("traceback") for e in o["executors"] if e["executor"] == "jax-interpret"]
assert tb == ["fake traceback\nValueError: fake rejection\n"], tb
md = open(f"{w}/known/summary.md").read()
assert "## Known divergences" in md, "summary.md lacks the known divergences"
print(f"ok: {len(known)} known divergences counted ({sum(k['occurrences'] for k in known.values())} occurrences), {len(found)} findings left")
PY
# Unavailable runs of an executor in the fast workers are counted per reason (numbers as N).
FAKE_EXECUTOR_MODE=ok run "$work/unavailable"
python3 - "$work/unavailable/summary.json" << 'PY' || fail "unavailable runs not counted per reason"
import json, sys
s = json.load(open(sys.argv[1]))
u = s["unavailable"].get("jax-interpret", {})
assert list(u) == ["fake answer N"] and u["fake answer N"] >= 1, s["unavailable"]
print(f"ok: {u['fake answer N']} unavailable jax-interpret runs counted under 'fake answer N'")
PY
echo '{"format": 1, "divergences": [{"case": "*", "executor": "jax-interpret"}]}' > "$work/bad.json"
run "$work/bad" --baseline "$work/bad.json"
rc=$?
[ "$rc" -eq 2 ] || fail "a bad baseline exited $rc, not 2"
grep -q "bad.json" "$work/log" || fail "the bad baseline's error does not name the file"
echo "ok: a bad baseline exits 2 naming the file"
