#!/usr/bin/env python3
"""Replays case files through collfuzz_jax.py over the executor protocol, with a per-case timeout.

    cfjax_replay.py [--mode interpret|gpu|lower|ir] [--timeout S] [--out FILE.jsonl] PATH...

PATHs are case files or directories of them (*.json, sorted). Like the C++ harness, it kills and
restarts the executor when a case runs past the timeout (interpret mode hangs on a wait that never
completes) and records a `timeout` outcome. Prints one summary line per case and the throughput;
--out writes {"file", "outcome"} per case as JSON lines. Any python can run this script; the
executor runs in --python (default: .venv-jax/bin/python at the repository root).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Executor:
  def __init__(self, python: str, mode: str):
    self.cmd = [python, os.path.join(HERE, "collfuzz_jax.py"), "--mode", mode]
    self.proc = None
    self.hello = None
    self.buf = b""
    self.next_id = 0
    self.startups: list[float] = []

  def start(self):
    t = time.monotonic()
    self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL if not os.environ.get("CFJAX_STDERR") else None)
    self.buf = b""
    self.hello = json.loads(self._readline(120))
    self.startups.append(time.monotonic() - t)

  def stop(self):
    if self.proc is not None:
      self.proc.kill()
      self.proc.wait()
      self.proc = None

  def _readline(self, timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    fd = self.proc.stdout.fileno()
    while b"\n" not in self.buf:
      left = deadline - time.monotonic()
      if left <= 0:
        raise TimeoutError()
      r, _, _ = select.select([fd], [], [], left)
      if r:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
          raise EOFError("the executor closed its stdout")
        self.buf += chunk
    line, self.buf = self.buf.split(b"\n", 1)
    return line

  def run(self, case: dict, timeout: float) -> dict:
    if self.proc is None:
      self.start()
    rid = self.next_id
    self.next_id += 1
    try:
      self.proc.stdin.write((json.dumps({"id": rid, "case": case}) + "\n").encode())
      self.proc.stdin.flush()
      while True:
        resp = json.loads(self._readline(timeout))
        if resp.get("id") == rid:
          return resp["outcome"]
    except TimeoutError:
      self.stop()
      return {"kind": "timeout", "reason": f"no answer within {timeout:g} s (executor restarted)"}
    except (EOFError, BrokenPipeError, json.JSONDecodeError) as e:
      self.stop()
      return {"kind": "crash", "reason": f"executor died: {type(e).__name__}: {e}"}


def case_files(paths: list[str]) -> list[str]:
  out = []
  for p in paths:
    if os.path.isdir(p):
      out.extend(os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".json"))
    else:
      out.append(p)
  return out


def summary(outcome: dict) -> str:
  kind = outcome.get("kind")
  if kind == "rejected":
    d = outcome["diagnostic"]
    op = f" @{d['op']}" if d.get("op") else ""
    return f"rejected [{d['stage']}] {d['exception']}: {d['message']}{op}"
  if kind == "completed":
    parts = []
    for cta in outcome.get("ctas", []):
      bufs = ",".join(f"{b['alloc']}={b.get('hex', '?')[:16]}" for b in cta.get("buffers", []))
      bars = ",".join(f"{b['alloc']}[{b['index']}]:a{b.get('arrivals')}/p{b.get('phases')}"
                      for b in cta.get("barriers", []))
      parts.append(f"cta{cta['rank']}({bufs}{';' if bars else ''}{bars})")
    return "completed " + " ".join(parts)
  return f"{kind}: {outcome.get('reason', '')}"


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("paths", nargs="+")
  ap.add_argument("--mode", default="interpret", choices=["interpret", "gpu", "lower", "ir"])
  ap.add_argument("--timeout", type=float, default=60.0)
  ap.add_argument("--python", default=os.path.join(ROOT, ".venv-jax", "bin", "python"))
  ap.add_argument("--out", help="write the outcomes as JSON lines")
  ap.add_argument("--quiet", action="store_true", help="print only the totals")
  args = ap.parse_args(argv)

  files = case_files(args.paths)
  ex = Executor(args.python, args.mode)
  ex.start()
  print(f"hello: {json.dumps(ex.hello)} (startup {ex.startups[0]:.2f} s)", flush=True)
  out = open(args.out, "w", encoding="utf-8") if args.out else None
  counts: dict[str, int] = {}
  t0 = time.monotonic()
  for f in files:
    with open(f, encoding="utf-8") as fh:
      case = json.load(fh)
    t = time.monotonic()
    outcome = ex.run(case, args.timeout)
    dt = time.monotonic() - t
    counts[outcome.get("kind", "?")] = counts.get(outcome.get("kind", "?"), 0) + 1
    if not args.quiet:
      print(f"{os.path.basename(f)} ({dt:.2f} s): {summary(outcome)}", flush=True)
    if out:
      out.write(json.dumps({"file": f, "outcome": outcome}) + "\n")
  elapsed = time.monotonic() - t0
  ex.stop()
  rate = len(files) / elapsed if elapsed > 0 else 0.0
  print(f"{len(files)} cases in {elapsed:.1f} s ({rate:.2f} cases/s); "
        f"startups {len(ex.startups)} (first {ex.startups[0]:.2f} s); "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
