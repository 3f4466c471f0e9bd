#!/usr/bin/env python3
"""Do `collfuzz repro` scripts pass or fail exactly as the JAX executor's verdict says?

    tools/repro_check.py [--mode interpret|lower] [--collfuzz BIN] [--python PY] [--jax V]
                         [--verdicts REPLAY.json] [--work DIR] PATH...

Writes interpret-mode scripts for every case under PATHs (`collfuzz repro PATHS -o DIR`), runs them
all in one Python process (harness/jax/cfjax_repro_run.py) and compares each script's pass/fail
with the verdict of `collfuzz replay PATHS --executors jax-interpret` for its case: read from
--verdicts (a replay's --json-out, as ci/test writes it), else from a replay this tool runs. A case
the replay skipped (a version mismatch; jax-lower's skip of a case it lowered counts as a pass) or
a script the generator refused is counted apart. Exit 1
on any disagreement or broken script. docs/python.md.

--one-per-shape runs the script of one case per shape (the first in name order of the cases whose
files use the same JSON fields, the same `op` and `kind` names and the same fields of `expect`):
the test command's check, which leaves out scripts that use the same constructs as a checked one
with other values (numbers, dtypes, names), since jax-interpret has just run every case. Without
it, every case's script runs (ci/nightly-jax-versions does).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from work_dir import work_dir  # noqa: E402


def case_shape(path: str) -> frozenset:
  """The fields a case file uses (array positions dropped), its op and kind names, and the fields
  of its expectation: two cases of one shape get scripts of the same constructs, with other
  values."""
  with open(path, encoding="utf-8") as f:
    case = json.load(f)
  shape = set()

  def walk(node, where):
    if isinstance(node, dict):
      for k, v in node.items():
        if where == "" and k in ("expect", "name"):
          continue
        shape.add(f"{where}/{k}")
        walk(v, f"{where}/{k}")
    elif isinstance(node, list):
      for v in node:
        walk(v, where + "[]")
    elif isinstance(node, str) and where.rsplit("/", 1)[-1] in ("op", "kind"):
      shape.add(f"{where}={node}")

  walk(case, "")
  expect = case.get("expect")
  if isinstance(expect, dict):
    for k, v in expect.items():
      shape.add(f"expect/{k}")
      if isinstance(v, dict):
        shape.update(f"expect/{k}/{kk}" for kk in v)
  return frozenset(shape)


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("paths", nargs="+")
  ap.add_argument("--collfuzz", default=os.path.join(ROOT, "build/release/collfuzz"))
  ap.add_argument("--python", default=os.path.join(ROOT, ".venv-jax/bin/python"))
  ap.add_argument("--verdicts", help="a replay's --json-out (jax-interpret entries are read)")
  ap.add_argument("--work", help="folder for the scripts (default: a temporary one)")
  ap.add_argument("--mode", default="interpret", choices=("interpret", "lower"),
                  help="the scripts' mode, compared with jax-interpret or jax-lower")
  ap.add_argument("--jobs", type=int, default=1,
                  help="run the scripts in this many Python processes at once (each its share)")
  ap.add_argument("--jax", help="write the scripts for this JAX release (collfuzz repro --jax): "
                  "the release of --python, when the replay judges unpinned cases by it")
  ap.add_argument("--one-per-shape", action="store_true",
                  help="run one script per case shape (JSON fields, op and kind names, expect's "
                  "fields) rather than every case's")
  args = ap.parse_args(argv)
  t0 = time.monotonic()
  work = work_dir(args.work, "collfuzz-repro-")
  scripts = os.path.join(work, "scripts")
  subprocess.run([args.collfuzz, "repro", *args.paths, "-o", scripts + "/", "--python", args.python,
                  "--mode", args.mode,
                  *(["--jax", args.jax] if args.jax else [])],
                 check=False, stderr=subprocess.DEVNULL)
  with open(os.path.join(scripts, "index.json"), encoding="utf-8") as f:
    index = json.load(f)
  t_gen = time.monotonic()

  executor = "jax-" + args.mode
  verdict_file = args.verdicts
  if not verdict_file:
    verdict_file = os.path.join(work, "replay.json")
    subprocess.run([args.collfuzz, "replay", *args.paths, "--executors", executor,
                    "--python", args.python, "--json-out", verdict_file],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  with open(verdict_file, encoding="utf-8") as f:
    verdicts = {os.path.normpath(v["file"]): v for v in json.load(f)
                if v.get("executor") == executor}
  # jax-lower answers "unavailable" for a case it lowered without an error (it does not run it),
  # which the replay skips. The script asserts the same: lowering passes (or, when the reference
  # predicts an error while lowering, fails). Count such a skip as a pass.
  for v in verdicts.values():
    if v.get("status") == "skip" and "lowered for CUDA without an error" in v.get("message", ""):
      v["status"] = "pass"
  t_replay = time.monotonic()

  def hung(v):  # the executor timed out: the script would hang the one process that runs them all
    return "got timeout" in v.get("message", "") or ":hang:" in v.get("signature", "")

  runnable = [e for e in index if "script" in e
              and verdicts.get(os.path.normpath(e["case"]), {}).get("status") in ("pass", "fail")
              and not hung(verdicts[os.path.normpath(e["case"])])]
  sampled_out = 0
  if args.one_per_shape:
    seen = set()
    kept = []
    for e in sorted(runnable, key=lambda e: e["case"]):
      key = case_shape(e["case"])
      if key in seen:
        sampled_out += 1
        continue
      seen.add(key)
      kept.append(e)
    runnable = kept
  # The scripts in --jobs processes, each its share (every jobs-th script), results merged.
  jobs = max(1, min(args.jobs, len(runnable)))
  procs = []
  for k in range(jobs):
    share = runnable[k::jobs]
    out = os.path.join(work, f"results-{k}.json")
    log = open(os.path.join(work, f"scripts-{k}.log"), "w", encoding="utf-8")  # pylint: disable=consider-using-with
    procs.append((subprocess.Popen(  # pylint: disable=consider-using-with
        [args.python, os.path.join(ROOT, "harness/jax/cfjax_repro_run.py"),
         *[os.path.join(scripts, e["script"]) for e in share], "--out", out],
        stdout=subprocess.DEVNULL, stderr=log), out, log))
  results = {}
  for proc, out, log in procs:
    proc.wait()
    log.close()
    if os.path.exists(out):
      with open(out, encoding="utf-8") as f:
        results.update(json.load(f))
  t_run = time.monotonic()

  agree = disagree = broken = 0
  both_fail = 0
  for e in runnable:
    v = verdicts[os.path.normpath(e["case"])]["status"]
    r = results.get(e["script"], {"status": "error", "detail": "no result"})
    if r["status"] == "error":
      broken += 1
      print(f"BROKEN {e['case']}: {r['detail'].splitlines()[0]}")
    elif r["status"] == v:
      agree += 1
      both_fail += v == "fail"
    else:
      disagree += 1
      print(f"DISAGREE {e['case']}: {executor} {v}, script {r['status']}: {r['detail']}")
  refused = [e for e in index if "error" in e]
  skipped = len(index) - len(refused) - len(runnable) - sampled_out
  for e in refused:
    print(f"REFUSED {e['case']}: {e['error']}")
  print(f"{agree} agree ({both_fail} of them fail both ways), {disagree} disagree, {broken} broken "
        f"scripts, {len(refused)} refused by the generator, {skipped} skipped (the replay skipped "
        f"the case, or {executor} timed out on it)"
        + (f", {sampled_out} left out (--one-per-shape: the shape of a checked case)"
           if args.one_per_shape else "")
        + f"; generate {t_gen - t0:.1f} s, replay {t_replay - t_gen:.1f} s, scripts "
        f"{t_run - t_replay:.1f} s")
  return 1 if disagree or broken or not runnable else 0


if __name__ == "__main__":
  sys.exit(main())
