#!/usr/bin/env python3
"""A fake external executor (docs/external-executor-protocol.md) for the process tests.

It ignores its arguments (so that it can stand in for the JAX executor's python), and behaves as
$FAKE_EXECUTOR_MODE says:
  ok         answers every request with an `unavailable` outcome whose reason is "fake answer <id>"
  garbage    like ok, but writes a line that is not JSON before its answer to request 1
  wrong-id   like ok, but answers request 1 with id 999 first
  no-hello   says nothing and sleeps
  long-line  answers request 1 with a line of $FAKE_LINE_BYTES bytes (no newline until the end)
  slow       like ok, but never answers request 1
  reject     answers every request with a `rejected` outcome (a disagreement with the reference
             wherever it predicts something else: findings for the kill-and-resume figure)
  paced      like ok, but each answer takes $FAKE_DELAY_<MODE> seconds, where <MODE> is the
             upper-cased value of its `--mode` argument (the JAX executors pass --mode interpret,
             --mode lower, ...): executors of different speeds, for the slow pool's turns test
  flip       answers like `reject` on odd request ids and like `ok` on even ones: a
             nondeterministic executor as the campaign sees it (the same case rerun gets another
             answer), for the flaky-finding test
  kill-parent  like ok, but on request 1 kills its parent (the worker process that runs it) with
             SIGKILL, once: the first fake to get there creates $FAKE_ONCE_FILE, later ones answer
             (the slow-worker death test)
With $FAKE_PIDS_DIR set, it starts a `sleep` child (in its own process group) and writes
"<its pid> <the sleep's pid>" to $FAKE_PIDS_DIR/<its pid>, so that tests can tell whether the
group of an executor that was killed is gone.
"""
import json
import os
import subprocess
import sys
import time

mode = os.environ.get("FAKE_EXECUTOR_MODE", "ok")
pids_dir = os.environ.get("FAKE_PIDS_DIR")
if pids_dir:
    sleeper = subprocess.Popen(["sleep", "1000"])
    with open(os.path.join(pids_dir, str(os.getpid())), "w") as f:
        f.write(f"{os.getpid()} {sleeper.pid}\n")
sys.stderr.write(f"fake executor {os.getpid()} in mode {mode}\n")
sys.stderr.flush()

out = sys.stdout
if mode == "no-hello":
    time.sleep(1000)
    sys.exit(0)
out.write(json.dumps({"hello": "collfuzz-executor/1", "name": "fake", "profile": "interpret",
                      "info": {"fake": "1"}}) + "\n")
out.flush()
for line in sys.stdin:
    if not line.strip():
        continue
    rid = json.loads(line)["id"]
    answer = json.dumps({"id": rid, "outcome": {"kind": "unavailable",
                                                "reason": f"fake answer {rid}"}}) + "\n"
    if mode == "reject" or (mode == "flip" and rid % 2 == 1):
        answer = json.dumps({"id": rid, "outcome": {
            "kind": "rejected", "profile": "interpret", "executor": "fake",
            "diagnostic": {"stage": "trace", "exception": "ValueError",
                           "message": "fake rejection", "rule": "", "op": ""},
            "traceback": "fake traceback\nValueError: fake rejection\n"}}) + "\n"
    if rid == 1 and mode == "garbage":
        out.write("this is not JSON\n")
    if rid == 1 and mode == "wrong-id":
        out.write(json.dumps({"id": 999, "outcome": {"kind": "unavailable", "reason": "x"}}) + "\n")
    if rid == 1 and mode == "long-line":
        n = int(os.environ.get("FAKE_LINE_BYTES", "100000000"))
        chunk = "x" * (1 << 20)
        try:
            while n > 0:
                out.write(chunk[: min(n, len(chunk))])
                n -= len(chunk)
            out.write("\n")
            out.flush()
        except BrokenPipeError:
            sys.exit(0)
        continue
    if rid == 1 and mode == "kill-parent":
        try:
            fd = os.open(os.environ["FAKE_ONCE_FILE"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            os.kill(os.getppid(), 9)
            time.sleep(1000)
        except FileExistsError:
            pass
    if rid == 1 and mode == "slow":
        time.sleep(1000)
    if mode == "paced":
        kind = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv[:-1] else ""
        time.sleep(float(os.environ.get("FAKE_DELAY_" + kind.upper(), "0")))
    out.write(answer)
    out.flush()
