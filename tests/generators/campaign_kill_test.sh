#!/bin/bash
# A campaign killed with SIGKILL keeps every finding it reported (each a valid case file) and
# `--resume` continues it from its saved state to the end of its budget.
# Usage: campaign_kill_test.sh <collfuzz binary>
set -u
collfuzz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/campaign

setsid "$collfuzz" fuzz --executors reference,sim --seconds 60 --jobs 2 --out "$out" > "$work/first.log" 2>&1 &
leader=$!
# Kill it mid-run: once both workers have saved state (a loaded CI machine may take a while to
# start them), plus a moment more so that findings are being written.
for _ in $(seq 1 300); do
  [ -f "$out/state/worker-0.json" ] && [ -f "$out/state/worker-1.json" ] && break
  sleep 0.1
done
sleep 1
kill -9 -- "-$leader" 2> /dev/null || kill -9 "$leader"
wait "$leader" 2> /dev/null
# The workers die with the supervisor; the directory stays locked until the last one is gone.
for _ in $(seq 1 100); do
  flock -n "$out/campaign.lock" true && break
  sleep 0.1
done

for f in "$out"/findings/*.json; do
  [ -e "$f" ] || continue
  case "$f" in *.outcomes.json) continue ;; esac
  "$collfuzz" run "$f" > /dev/null 2>&1
  rc=$?
  if [ "$rc" -gt 1 ]; then echo "FAIL: $f is not a valid case file (exit $rc)"; exit 1; fi
done
for w in 0 1; do
  if ! grep -q '"next_index"' "$out/state/worker-$w.json"; then echo "FAIL: worker $w saved no state"; exit 1; fi
done
saved=$(sed 's/.*"next_index":\([0-9]*\).*/\1/' "$out/state/worker-0.json")

"$collfuzz" fuzz --executors reference,sim --resume --out "$out" --seconds 6 > "$work/second.log" 2>&1
rc=$?
if [ "$rc" -gt 1 ]; then echo "FAIL: resume exited $rc"; cat "$work/second.log"; exit 1; fi
if [ ! -f "$out/summary.json" ] || [ ! -f "$out/summary.md" ]; then echo "FAIL: no summary after resume"; exit 1; fi
resumed=$(sed 's/.*"next_index":\([0-9]*\).*/\1/' "$out/state/worker-0.json")
if [ "$resumed" -le "$saved" ]; then echo "FAIL: worker 0 did not continue ($saved -> $resumed)"; exit 1; fi
echo "1 passed, 0 failed"
