#!/bin/bash
# The slow pool's executors take turns by the time they have spent (docs/fuzzing.md, "The slow
# executors' pool"): one that answers in a tenth of the time of another runs several times as
# many cases, and neither is starved. Both executors are the fake external executor
# (tests/process/fake_executor.py) in mode `paced`: jax-interpret answers in 0.5 s, jax-lower in
# 0.05 s. In lockstep (each case on every executor) they would run the same number of cases.
# Usage: slow_pool_turns_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"

export FAKE_EXECUTOR_MODE=paced
export FAKE_DELAY_INTERPRET=0.5 FAKE_DELAY_LOWER=0.05
"$collfuzz" fuzz --executors sim,jax-interpret,jax-lower --seconds 12 --jobs 1 --slow-jobs 1 \
  --out "$work/out" > "$work/log" 2>&1
python3 - "$work/out/summary.json" << 'PY' || fail "the executors did not take turns by time"
import json, sys
s = json.load(open(sys.argv[1]))
e = s["slow_pool"]["workers"][0]["executors"]
interpret, lower = e["jax-interpret"]["runs"], e["jax-lower"]["runs"]
print(f"jax-interpret {interpret} runs, jax-lower {lower} runs")
assert interpret >= 3, e
assert lower >= 4 * interpret, e
PY
