#!/bin/bash
# The union of 4 shards equals one unsharded run over the same case indices: 4 processes run
# `collfuzz fuzz --shard I/4 --cases C` (global indices I, I+4, ..., below 4C) and one runs
# `--cases 4C`; the test checks that every per-rule and per-outcome count sums to the unsharded
# run's, that each signature's occurrences sum to its count there, that every finding a shard made
# is on one of its own indices, and that the earliest case of each signature over the shards is
# the unsharded run's finding case (the same case id). The faithful simulator makes no finding on
# this seed; shard_mutant_union_test.sh checks the findings side with planted bugs.
# Usage: shard_union_test.sh <collfuzz binary>
set -u
collfuzz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
C=150
for i in 0 1 2 3; do
  # Half of them from the environment (the engines' way), half from the flag.
  if [ $((i % 2)) -eq 0 ]; then
    "$collfuzz" fuzz --executors reference,sim --seed 7 --cases $C --jobs 2 --no-shrink --shard "$i/4" \
      --out "$work/shard-$i" > "$work/shard-$i.log" 2>&1
  else
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=4 "$collfuzz" fuzz --executors reference,sim \
      --seed 7 --cases $C --jobs 2 --no-shrink --out "$work/shard-$i" > "$work/shard-$i.log" 2>&1
  fi
  rc=$?
  if [ "$rc" -gt 1 ]; then echo "FAIL: shard $i exited $rc"; cat "$work/shard-$i.log"; exit 1; fi
done
"$collfuzz" fuzz --executors reference,sim --seed 7 --cases $((4 * C)) --no-shrink \
  --out "$work/all" > "$work/all.log" 2>&1
rc=$?
if [ "$rc" -gt 1 ]; then echo "FAIL: unsharded run exited $rc"; cat "$work/all.log"; exit 1; fi
python3 - "$work" 4 $C << 'PY'
import json, sys, pathlib
work, n, c = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def load(d): return json.loads((work / d / "summary.json").read_text())
def findings(d):
    out = {}
    for f in (work / d / "findings").glob("*.outcomes.json"):
        j = json.loads(f.read_text()); out[j["signature"]] = j["found"]["index"]
    return out
def add(a, b):
    if isinstance(b, dict):
        return {k: add(a.get(k, {} if isinstance(b.get(k), dict) else 0), b.get(k, {} if isinstance(a.get(k), dict) else 0)) for k in set(a) | set(b)}
    return a + b
allsum = load("all")
total = {"cases": 0, "rules": {}, "outcome_kinds": {}}
occ, first = {}, {}
for i in range(n):
    s = load(f"shard-{i}")
    assert s["shard"]["index"] == i and s["shard"]["count"] == n, ("shard not recorded", s["shard"])
    total["cases"] += s["cases"]
    total["rules"] = add(total["rules"], s["coverage"]["rules"])
    total["outcome_kinds"] = add(total["outcome_kinds"], s["coverage"]["outcome_kinds"])
    for f in s["findings"]: occ[f["signature"]] = occ.get(f["signature"], 0) + f["occurrences"]
    for sig, idx in findings(f"shard-{i}").items():
        assert idx % n == i and idx < n * c, f"shard {i} found {sig} on index {idx}: not its case"
        first[sig] = min(first.get(sig, idx), idx)
errors = []
if total["cases"] != allsum["cases"]: errors.append(f"cases {total['cases']} != {allsum['cases']}")
if total["rules"] != allsum["coverage"]["rules"]: errors.append("per-rule counts differ")
if total["outcome_kinds"] != allsum["coverage"]["outcome_kinds"]: errors.append("outcome counts differ")
all_occ = {f["signature"]: f["occurrences"] for f in allsum["findings"]}
if occ != all_occ: errors.append(f"occurrences differ: {occ} vs {all_occ}")
all_first = findings("all")
if first != all_first: errors.append(f"finding case indices differ: {first} vs {all_first}")
if errors:
    print("FAIL:", "; ".join(errors)); sys.exit(1)
print(f"ok: {n} shards x {c} cases = {allsum['cases']} cases, {len(all_first)} findings, same counts per rule and outcome")
PY
