#!/bin/bash
# Processes left 5 s after kill -9 of a campaign's supervisor (docs/reliability.md), with
# the real JAX interpret executor (.venv-jax): the supervisor, its 2 workers and their 2 JAX
# processes are counted before the kill, and those still alive 5 s after it. Whatever is left is
# then killed by its pid.
# Usage: kill_parent_figure.sh <collfuzz binary>
collfuzz=$1
out=$(mktemp -d)/campaign
"$collfuzz" fuzz --executors sim,jax-interpret --slow-every 1 --slow-jobs 0 --seconds 300 --jobs 2 --out "$out" > /dev/null 2>&1 &
leader=$!
for _ in $(seq 1 600); do
  n=$(pgrep -f "collfuzz_jax.py" -P "$(pgrep -d, -P $leader)" 2>/dev/null | wc -l)
  [ "$n" -ge 2 ] && [ -f "$out/state/worker-1.json" ] && break
  sleep 0.1
done
sleep 3
before=$( (pgrep -f -- "--out $out"; pgrep -f collfuzz_jax.py -P "$(pgrep -d, -P $leader)") | sort -u)
echo "before kill: $(echo "$before" | wc -l) processes: $(echo $before)"
kill -9 $leader
sleep 5
left=0
for p in $before; do [ -e /proc/$p ] && ! grep -q '^[^)]*) Z' /proc/$p/stat && left=$((left+1)); done
echo "left 5 s after kill -9 of the supervisor: $left"
for p in $before; do kill -9 $p 2>/dev/null; done
rm -rf "$(dirname "$out")"
