#!/bin/bash
# The union of 4 shards has the same findings as one unsharded run: 4 processes run shard I/4 of
# seed 3 (C cases each, 2 workers) against a simulator with a planted bug, one runs the whole 4C
# cases; every signature's occurrences, every rule and outcome count must sum to the unsharded
# run's, every finding a shard made must be on one of its own case indices, and the earliest index
# each signature was found on over the shards must be the unsharded run's.
# Usage: shard_mutant_union_test.sh <collfuzz_shard_mutant binary>
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
C=400
for mutant in multicast_skips_self predicate_ignored partition_halves_swapped; do
  for i in 0 1 2 3; do
    "$bin" 3 "$mutant" "$i/4" $C 2 > "$work/$mutant-$i.json" || { echo "FAIL: shard $i exited $?"; exit 1; }
  done
  "$bin" 3 "$mutant" 0/1 $((4 * C)) 2 > "$work/$mutant-all.json" || { echo "FAIL: unsharded run"; exit 1; }
  python3 - "$work" "$mutant" 4 $C << 'PY' || exit 1
import json, sys, pathlib
work, mutant, n, c = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
load = lambda s: json.loads((work / f"{mutant}-{s}.json").read_text())
def add(a, b):
    if isinstance(b, dict):
        return {k: add(a.get(k, {} if isinstance(b.get(k), dict) else 0), b.get(k, {} if isinstance(a.get(k), dict) else 0)) for k in set(a) | set(b)}
    return a + b
alls = load("all")
tot = {"cases": 0, "rules": {}, "outcome_kinds": {}, "occurrences": {}}
first = {}
for i in range(n):
    s = load(i)
    for k in ("rules", "outcome_kinds", "occurrences"): tot[k] = add(tot[k], s[k])
    tot["cases"] += s["cases"]
    for sig, idxs in s["found"].items():
        for idx in idxs:
            assert idx % n == i and idx < n * c, f"shard {i} found {sig} on index {idx}: not its case"
        first[sig] = min([first.get(sig, min(idxs))] + idxs)
errors = [k for k in ("cases", "rules", "outcome_kinds", "occurrences") if tot[k] != alls[k]]
all_first = {sig: min(idxs) for sig, idxs in alls["found"].items()}
if first != all_first: errors.append(f"first indices {first} != {all_first}")
if not all_first: errors.append("no finding: the test checks nothing")
if errors: print(f"FAIL ({mutant}):", errors); sys.exit(1)
print(f"ok ({mutant}): {alls['cases']} cases, {len(all_first)} signatures, {sum(alls['occurrences'].values())} occurrences")
PY
done
