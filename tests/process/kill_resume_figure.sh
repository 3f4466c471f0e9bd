#!/bin/bash
# Findings lost across kill -9 and --resume (docs/reliability.md): a campaign is killed
# with SIGKILL (the supervisor alone) <rounds> times at random moments and resumed each time; every
# finding on disk before a kill must be in the final summary.
# Usage: kill_resume_figure.sh <collfuzz binary> [rounds] [executors]
collfuzz=$1
rounds=${2:-5}
executors=${3:-reference,sim}
work=$(mktemp -d)
out=$work/campaign
seen=$work/seen
: > "$seen"
lock_free() { flock -n "$out/campaign.lock" true 2> /dev/null; }
for ((r = 0; r < rounds; r++)); do
  if [ "$r" -eq 0 ]; then
    "$collfuzz" fuzz --executors "$executors" --slow-every 1 --slow-jobs 0 --seconds 600 --jobs 2 --out "$out" > /dev/null 2>&1 &
  else
    "$collfuzz" fuzz --resume --slow-every 1 --slow-jobs 0 --seconds 600 --out "$out" > /dev/null 2>&1 &
  fi
  leader=$!
  sleep $((2 + RANDOM % 4))
  kill -9 "$leader"
  wait "$leader" 2> /dev/null
  for _ in $(seq 1 100); do lock_free && break; sleep 0.1; done
  lock_free || { echo "round $r: the lock is still held 10 s after the kill"; exit 1; }
  for f in "$out"/findings/*.outcomes.json; do
    [ -e "$f" ] && basename "$f" .outcomes.json >> "$seen"
  done
  orphans=0
  for c in "$out"/findings/*.claim; do
    [ -e "$c" ] && [ ! -f "${c%.claim}.outcomes.json" ] && orphans=$((orphans + 1))
  done
  echo "round $r: $(ls "$out"/findings/*.outcomes.json 2> /dev/null | wc -l) findings on disk, $orphans claims without a finding (removed by the next run)"
done
"$collfuzz" fuzz --resume --seconds 1 --out "$out" > "$work/last.log" 2>&1
sort -u "$seen" > "$seen.sorted"
lost=0
while read -r stem; do
  grep -q "/$stem.json\"" "$out/summary.json" || { echo "lost: $stem"; lost=$((lost + 1)); }
done < "$seen.sorted"
echo "findings seen on disk after a kill: $(wc -l < "$seen.sorted"); in the final summary: $(grep -c '"case_file"' "$out/summary.json"); lost: $lost"
rm -rf "$work"
[ "$lost" -eq 0 ]
