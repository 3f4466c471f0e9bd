#!/bin/bash
# Stalls are outcomes (issue 11): a slow executor that hangs on a case is named on the progress
# line while it lasts ("jax-interpret: case N for S s"), and its timeout and stall are counted in
# summary.md and summary.json; the fast loop goes on meanwhile. The executor is the fake external
# executor (tests/process/fake_executor.py) in mode `slow`: it never answers its first request.
# Usage: slow_pool_stall_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"

export FAKE_EXECUTOR_MODE=slow
# A replay's JSON (--replay-rates): jax-interpret compared 3 cases in 1.5 s (2 cases/s); skips
# are not counted.
cat > "$work/replay.json" << 'JSON'
[{"executor": "jax-interpret", "status": "pass", "seconds": 0.5},
 {"executor": "jax-interpret", "status": "fail", "seconds": 0.5},
 {"executor": "jax-interpret", "status": "pass", "seconds": 0.5},
 {"executor": "jax-interpret", "status": "skip", "seconds": 9.0},
 {"executor": "sim", "status": "pass", "seconds": 0.001}]
JSON
"$collfuzz" fuzz --executors sim,jax-interpret --timeout 11 --seconds 20 --jobs 1 --slow-jobs 1 \
  --replay-rates "$work/replay.json" --out "$work/out" > "$work/log" 2>&1
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
# worker, executor, runs, cases/s, own cases/s, replay cases/s, share, classes, timeouts, stalls
grep -Eq "\| 0 \| jax-interpret \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| 2\.00 \| [0-9]+ % \| [0-9]+ \| [1-9][0-9]* \| [1-9][0-9]* \|" "$work/out/summary.md" ||
  fail "summary.md does not show the timeout and the stall"
# The stall is named with its case (slow-stalls-0.tsv), and the executor's time is counted: the
# 11-s timeout is a large part of the worker's life (20 s and the stop; more on a loaded machine).
grep -Eq "^jax-interpret	[0-9]+	1[0-9.]+	timeout	" "$work/out/slow-stalls-0.tsv" ||
  fail "slow-stalls-0.tsv does not name the stalled case"
python3 - "$work/out/summary.json" << 'PY' || fail "the executor's rates and share are not counted"
import json, sys
e = json.load(open(sys.argv[1]))["slow_pool"]["workers"][0]["executors"]["jax-interpret"]
assert e["busy_seconds"] >= 10, e
assert 0.25 < e["time_share"] <= 1.0, e
assert e["own_cases_per_second"] >= e["cases_per_second"] > 0, e
assert e["replay_cases_per_second"] == 2.0, e
PY
# A file that is not a replay's JSON: exit 2 naming the flag.
echo '{"not": "a replay"}' > "$work/bad.json"
"$collfuzz" fuzz --executors sim --seconds 1 --replay-rates "$work/bad.json" --out "$work/bad" > "$work/bad.log" 2>&1
[ $? -eq 2 ] && grep -q -- "--replay-rates" "$work/bad.log" || { cat "$work/bad.log"; fail "a bad --replay-rates file was not refused naming the flag"; }
echo "ok: $(grep -o 'waiting on [^,]*' "$work/log" | tail -1)"
