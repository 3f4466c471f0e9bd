#!/bin/bash
# Campaign faults and process hygiene (issue 10), each reproduced as it was reported:
#  1. kill -9 of the supervisor leaves no process behind (workers, executors, their children);
#  2. a second campaign, or a --resume, on a --out in use exits 2 and names the holder;
#  3. kill -9 of one worker is a worker crash (restarted, counted), not a finding, and the
#     executor group it left is killed; a worker killed at the budget's end leaves none either;
#  4. SIGHUP stops a campaign like Ctrl-C: summary written, no process left;
#  5. a full disk (fault injection: $COLLFUZZ_FAULT_DISK_FULL) stops the campaign with exit 3, no
#     restart loop, no claim without its finding, and the state saved before intact;
#  6. the same on a real full file system (a 1 MiB tmpfs) when this user may mount one.
# Usage: campaign_faults_test.sh <collfuzz binary> <source dir>. Conditions are awaited with
# bounded polling (a loaded 2-core machine may be slow), never with fixed sleeps alone.
set -u
collfuzz=$1
src=$2
work=$(mktemp -d)
mounted=""
leaders=()
cleanup() {
  for p in "${leaders[@]}"; do kill -9 "$p" 2> /dev/null; done
  [ -n "$mounted" ] && umount "$mounted" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# wait_for <seconds> <command...>: polls every 0.1 s.
wait_for() {
  local limit=$1
  shift
  local i
  for ((i = 0; i < limit * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}
state_saved() { [ -f "$1/state/worker-0.json" ] && [ -f "$1/state/worker-1.json" ]; }
# Processes whose command line names $work (campaign processes: they carry --out $work/...; the
# fake executors' sleeps are found through their pid files).
left_over() {
  local n
  n=$(pgrep -f -- "--out $work" | wc -l)
  for f in "$work"/pids/*; do
    [ -e "$f" ] || continue
    for p in $(cat "$f"); do
      if [ -e "/proc/$p" ] && ! grep -q '^[^)]*) Z' "/proc/$p/stat" 2> /dev/null; then n=$((n + 1)); fi
    done
  done
  echo "$n"
}
none_left() { [ "$(left_over)" -eq 0 ]; }
pid_files_at_least() { [ "$(ls "$work/pids" | wc -l)" -ge "$1" ]; }
has_child() { [ -n "$(pgrep -P "$1")" ]; }

# A fake JAX python (tests/process/fake_executor.py) that starts a sleep of its own, so that an
# executor's process group is there to be left behind.
mkdir -p "$work/pids"
export COLLFUZZ_JAX_PYTHON=$src/tests/process/fake_executor.py
export FAKE_EXECUTOR_MODE=ok FAKE_PIDS_DIR=$work/pids

# --- 1. kill -9 of the supervisor ------------------------------------------------------------
out=$work/killed
"$collfuzz" fuzz --executors sim,jax-interpret --slow-every 1 --slow-jobs 0 --seconds 120 --jobs 2 --out "$out" \
  > "$work/1.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 state_saved "$out" || fail "1: the workers saved no state"
wait_for 30 pid_files_at_least 2 || fail "1: the executors did not start"
kill -9 "$leader"
wait "$leader" 2> /dev/null
wait_for 5 none_left || fail "1: $(left_over) processes left 5 s after kill -9 of the supervisor"
echo "1: 0 processes left after kill -9 of the supervisor"

# --- 2. the lock on --out ---------------------------------------------------------------------
out=$work/locked
"$collfuzz" fuzz --executors sim --seconds 120 --jobs 2 --out "$out" > "$work/2.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 state_saved "$out" || fail "2: the first campaign saved no state"
"$collfuzz" fuzz --executors sim --seconds 5 --out "$out" > "$work/2b.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "2: a second campaign on the same --out exited $rc, not 2"
grep -q "in use by another campaign (pid $leader on host" "$work/2b.log" ||
  fail "2: the refusal does not name the holder: $(cat "$work/2b.log")"
"$collfuzz" fuzz --resume --out "$out" > "$work/2c.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "2: --resume of a campaign in use exited $rc, not 2"
kill -9 "$leader"
wait "$leader" 2> /dev/null
wait_for 5 none_left || fail "2: processes left after kill -9"
# Once every process of the killed campaign is gone, --resume may run.
"$collfuzz" fuzz --resume --out "$out" --seconds 2 > "$work/2d.log" 2>&1
rc=$?
[ "$rc" -le 1 ] || fail "2: --resume after the campaign ended exited $rc: $(cat "$work/2d.log")"
echo "2: a second campaign and a --resume on a --out in use exit 2 naming the holder"

# --- 3. kill -9 of one worker ------------------------------------------------------------------
rm -f "$work"/pids/*
out=$work/worker
# Only the fake executor (it answers unavailable): no finding can come from the cases.
# (--allow-unavailable: it compares nothing, which is not what this part tests.)
"$collfuzz" fuzz --executors jax-interpret --slow-every 1 --slow-jobs 0 --seconds 120 --jobs 2 --allow-unavailable --out "$out" \
  > "$work/3.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 state_saved "$out" || fail "3: the workers saved no state"
worker=$(pgrep -P "$leader" | head -1)
[ -n "$worker" ] || fail "3: no worker found"
wait_for 30 has_child "$worker" || fail "3: the worker started no executor"
executor=$(pgrep -P "$worker" | head -1)
wait_for 30 test -f "$work/pids/$executor" || fail "3: the executor wrote no pid file"
sleeper=$(cut -d' ' -f2 "$work/pids/$executor")
kill -9 "$worker"
gone() { [ ! -e "/proc/$1" ] || grep -q '^[^)]*) Z' "/proc/$1/stat" 2> /dev/null; }
wait_for 10 gone "$sleeper" || fail "3: the killed worker's executor group (sleep $sleeper) is still alive"
restarted() { pgrep -P "$leader" | grep -qvx "$1"; [ "$(pgrep -P "$leader" | wc -l)" -ge 2 ]; }
wait_for 30 restarted "$worker" || fail "3: the killed worker was not restarted"
kill -INT "$leader"
wait "$leader"
rc=$?
[ "$rc" -le 1 ] || fail "3: the campaign exited $rc after a worker was killed: $(cat "$work/3.log")"
ls "$out"/findings/ | grep -q SIGKILL && fail "3: the killed worker was stored as a finding"
[ "$rc" -eq 0 ] || fail "3: the campaign exited $rc after a worker was killed: $(cat "$work/3.log")"
grep -q '"worker_crashes": [1-9]' "$out/summary.json" || fail "3: the worker crash is not counted"
wait_for 5 none_left || fail "3: $(left_over) processes left after the campaign"
echo "3: kill -9 of a worker: restarted, counted, no finding, its executor group gone"

# --- 3b. a worker still busy at the budget's end ----------------------------------------------
rm -f "$work"/pids/*
out=$work/busy
# The fake executor never answers its first case (--timeout is far away): at the budget's end the
# worker is killed after the grace period, and its executor's group must go with it.
FAKE_EXECUTOR_MODE=slow "$collfuzz" fuzz --executors jax-interpret --slow-every 1 --slow-jobs 0 --seconds 5 \
  --timeout 600 --jobs 1 --out "$out" > "$work/3b.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 pid_files_at_least 1 || fail "3b: the executor did not start"
wait "$leader"
wait_for 5 none_left || fail "3b: $(left_over) processes left after a worker was killed at the budget's end"
echo "3b: a worker killed at the budget's end leaves no executor process"

# --- 4. SIGHUP -----------------------------------------------------------------------------------
out=$work/hup
"$collfuzz" fuzz --executors sim --seconds 120 --jobs 2 --out "$out" > "$work/4.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 state_saved "$out" || fail "4: the workers saved no state"
kill -HUP "$leader"
wait "$leader"
rc=$?
[ "$rc" -le 1 ] || fail "4: SIGHUP: exit $rc"
[ -f "$out/summary.json" ] || fail "4: SIGHUP: no summary"
wait_for 5 none_left || fail "4: processes left after SIGHUP"
echo "4: SIGHUP stops the campaign with a summary and no process left"

# --- 5. disk full (fault injection) -------------------------------------------------------------
unset COLLFUZZ_JAX_PYTHON FAKE_PIDS_DIR
out=$work/full
export COLLFUZZ_FAULT_DISK_FULL=$work/disk-is-full
"$collfuzz" fuzz --executors sim --seconds 120 --jobs 2 --out "$out" > "$work/5.log" 2>&1 &
leader=$!
leaders+=("$leader")
wait_for 60 state_saved "$out" || fail "5: the workers saved no state"
touch "$COLLFUZZ_FAULT_DISK_FULL"
start=$SECONDS
wait "$leader"
rc=$?
[ "$rc" -eq 3 ] || fail "5: disk full: exit $rc, not 3: $(tail -5 "$work/5.log")"
[ $((SECONDS - start)) -le 30 ] || fail "5: disk full: $((SECONDS - start)) s to stop"
grep -q "the disk is full" "$work/5.log" || fail "5: no clear message: $(tail -5 "$work/5.log")"
restarts=$(grep -c "collfuzz: worker" "$work/5.log")
[ "$restarts" -le 2 ] || fail "5: $restarts worker errors: a restart loop"
for c in "$out"/findings/*.claim; do
  [ -e "$c" ] || continue
  [ -f "${c%.claim}.outcomes.json" ] || fail "5: $c has no finding beside it"
done
for w in 0 1; do
  grep -q '"next_index"' "$out/state/worker-$w.json" || fail "5: worker $w's state was lost"
done
rm -f "$COLLFUZZ_FAULT_DISK_FULL"
unset COLLFUZZ_FAULT_DISK_FULL
echo "5: disk full (injected): exit 3 in $((SECONDS - start)) s, no restart loop, no orphan claim, state kept"

# --- 6. disk full (a real 1 MiB tmpfs) -----------------------------------------------------------
mkdir -p "$work/tmpfs"
if mount -t tmpfs -o size=1m tmpfs "$work/tmpfs" 2> /dev/null; then
  mounted=$work/tmpfs
  out=$work/tmpfs/campaign
  "$collfuzz" fuzz --executors sim --seconds 120 --jobs 2 --out "$out" > "$work/6.log" 2>&1 &
  leader=$!
leaders+=("$leader")
  wait_for 60 state_saved "$out" || fail "6: the workers saved no state"
  cp "$out/state/worker-0.json" "$work/6-state-before.json"
  head -c 2000000 /dev/zero > "$work/tmpfs/filler" 2> /dev/null
  start=$SECONDS
  wait "$leader"
  rc=$?
  [ "$rc" -eq 3 ] || fail "6: real disk full: exit $rc, not 3: $(tail -5 "$work/6.log")"
  grep -q "the disk is full" "$work/6.log" || fail "6: no clear message"
  for c in "$out"/findings/*.claim; do
    [ -e "$c" ] || continue
    [ -f "${c%.claim}.outcomes.json" ] || fail "6: $c has no finding beside it"
  done
  grep -q '"next_index"' "$out/state/worker-0.json" || fail "6: worker 0's state was lost"
  echo "6: disk full (1 MiB tmpfs): exit 3 in $((SECONDS - start)) s, no orphan claim, state kept"
else
  echo "6: skipped (this user cannot mount a tmpfs)"
fi
echo "1 passed, 0 failed"
