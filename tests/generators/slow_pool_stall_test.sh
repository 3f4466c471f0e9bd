#!/bin/bash
# Stalls are outcomes (issue 11): a slow executor that hangs on a case is named on the progress
# line while it lasts ("jax-interpret: case N for S s"), and its timeout and stall are counted in
# summary.md and summary.json; the fast loop goes on meanwhile. The executor is the fake external
# executor (tests/process/fake_executor.py) in mode `slow`: it never answers its first request.
# Usage: slow_pool_stall_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"

export FAKE_EXECUTOR_MODE=slow
"$collfuzz" fuzz --executors sim,jax-interpret --timeout 11 --seconds 20 --jobs 1 --slow-jobs 1 \
  --out "$work/out" > "$work/log" 2>&1
grep -Eq "waiting on jax-interpret: case [0-9,]+ for [0-9]+ s" "$work/log" ||
  fail "the progress line never named the stalled executor"
python3 - "$work/out/summary.json" << 'PY' || fail "summary.json does not count the timeout and the stall"
import json, sys
s = json.load(open(sys.argv[1]))
e = s["slow_pool"]["workers"][0]["executors"]["jax-interpret"]
assert e["timeouts"] >= 1, e
assert e["stalls"] >= 1, e
assert e["longest_run_seconds"] >= 10, e
assert e["runs"] > 1, e  # restarted after the timeout, it went on
PY
# worker, executor, runs, cases/s, own cases/s, share, classes, timeouts, stalls
grep -Eq "\| 0 \| jax-interpret \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+ % \| [0-9]+ \| [1-9][0-9]* \| [1-9][0-9]* \|" "$work/out/summary.md" ||
  fail "summary.md does not show the timeout and the stall"
# The stall is named with its case (slow-stalls-0.tsv), and the executor's time is counted: the
# 11-s timeout alone is more than half of the worker's 20 s.
grep -Eq "^jax-interpret	[0-9]+	1[0-9.]+	timeout	" "$work/out/slow-stalls-0.tsv" ||
  fail "slow-stalls-0.tsv does not name the stalled case"
python3 - "$work/out/summary.json" << 'PY' || fail "the executor's rates and share are not counted"
import json, sys
e = json.load(open(sys.argv[1]))["slow_pool"]["workers"][0]["executors"]["jax-interpret"]
assert e["busy_seconds"] >= 10, e
assert 0.5 < e["time_share"] <= 1.0, e
assert e["own_cases_per_second"] >= e["cases_per_second"] > 0, e
PY
echo "ok: $(grep -o 'waiting on [^,]*' "$work/log" | tail -1)"
