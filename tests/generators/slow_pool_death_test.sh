#!/bin/bash
# A slow pool worker that dies is counted as a worker crash and replaced, and the campaign names
# the case it was on and the executor running it (slow-deaths.tsv, summary.json's
# slow_pool.worker_deaths, summary.md and the closing lines), with the command that regenerates
# the case. The slow executor is the fake external executor (tests/process/fake_executor.py) in
# mode `kill-parent`: on its first request it kills the slow worker that runs it, once.
# Usage: slow_pool_death_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"

export FAKE_EXECUTOR_MODE=kill-parent
export FAKE_ONCE_FILE=$work/killed-once
"$collfuzz" fuzz --executors sim,jax-interpret --seconds 8 --jobs 1 --slow-jobs 1 --seed 5 \
  --out "$work/out" > "$work/log" 2>&1
[ -e "$FAKE_ONCE_FILE" ] || fail "the fake executor never ran"
grep -Eq "^0	[0-9]+	jax-interpret	signal 9$" "$work/out/slow-deaths.tsv" ||
  fail "slow-deaths.tsv does not name the case and executor of the dead worker: $(cat "$work/out/slow-deaths.tsv" 2>&1)"
python3 - "$work/out/summary.json" "$work/out/slow-deaths.tsv" << 'PY' || fail "summary.json does not name the dead worker's case"
import json, sys
s = json.load(open(sys.argv[1]))
deaths = s["slow_pool"]["worker_deaths"]
assert len(deaths) == 1, deaths
d = deaths[0]
assert d["executor"] == "jax-interpret" and d["how"] == "signal 9", d
assert d["case"] == open(sys.argv[2]).read().split("\t")[1], d
assert s["worker_crashes"] >= 1, s["worker_crashes"]
assert s["slow_pool"]["workers"][0]["cases"] >= 1, s["slow_pool"]
PY
grep -Eq "Slow worker 0 died \(signal 9\) on case [0-9]+ running jax-interpret: rerun it with \`collfuzz gen --seed 5 --first [0-9]+ --count 1" "$work/out/summary.md" ||
  fail "summary.md does not name the dead worker's case"
grep -Eq "slow worker 0 died \(signal 9\) on case [0-9]+ running jax-interpret" "$work/log" ||
  fail "the closing lines do not name the dead worker's case"
echo "ok: $(grep -o 'Slow worker 0 died[^:]*' "$work/out/summary.md")"
