#!/usr/bin/env python3
"""JAX's own tests through `collfuzz import`: does each imported case agree with its hand-written
translation?

    tools/jax_tests_import.py [--collfuzz BIN] [--python PY] [--executors LIST] [--work DIR]

For every corpus/jax-tests/py/NAME.py: imported as `collfuzz import NAME.py --arch ARCH` does (in one
Python process, harness/jax/cfjax_import.py --serve; ARCH, the profile and the JAX pin from the
hand-written corpus/jax-tests/NAME.json, which a kernel does not hold), then
1. the imported case and the hand-written one compared in canonical form
   (tools/import_roundtrip.canonical: names, notes and expectations aside);
2. the imported case, given the hand-written case's `expect` (its names mapped to the imported
   names by position), replayed on --executors (default reference,sim,jax-interpret).
A .py without a hand-written case is imported and replayed against the reference only when it
holds an `EXPECT` dict. Prints one line per test and the share. Exit 1 on any import refused,
canonical difference, or replay failure. docs/python.md, "JAX's tests through import".
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

from import_roundtrip import canonical, first_difference  # noqa: E402


def name_map(case: dict) -> list:
  """Array and allocation names of a case in canonical order."""
  names = [a["name"] for a in case.get("inputs", [])] + [a["name"] for a in case.get("outputs", [])]

  def body(ops):
    for op in ops:
      if op.get("op") == "run_scoped":
        names.extend(a["name"] for a in op.get("allocs", []))
      body(op.get("body", []))

  body(case.get("program", []))
  return names


def rename(j, mapping: dict):
  if isinstance(j, dict):
    return {k: (mapping.get(v, v) if k in ("name", "alloc", "input", "output") and
                isinstance(v, str) else rename(v, mapping)) for k, v in j.items()}
  if isinstance(j, list):
    return [rename(x, mapping) for x in j]
  return j


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--collfuzz", default=os.path.join(ROOT, "build/release/collfuzz"))
  ap.add_argument("--python", default=os.path.join(ROOT, ".venv-jax/bin/python"))
  ap.add_argument("--executors", default="reference,sim,jax-interpret")
  ap.add_argument("--work")
  ap.add_argument("--dir", default=os.path.join(ROOT, "corpus/jax-tests"))
  args = ap.parse_args(argv)
  t0 = time.monotonic()
  work = work_dir(args.work, "collfuzz-jaxtests-")
  cases_dir = os.path.join(work, "cases")
  os.makedirs(cases_dir, exist_ok=True)
  py_dir = os.path.join(args.dir, "py")
  bad = 0
  same = 0
  traced_error = 0
  rows = []
  # _NAME.py: a module the kernel files share (the body of a parameterized test), not a test.
  pys = sorted(f for f in os.listdir(py_dir) if f.endswith(".py") and not f.startswith("_"))
  hands, requests = {}, []
  for py in pys:
    hand_file = os.path.join(args.dir, py[:-3] + ".json")
    hands[py] = None
    if os.path.exists(hand_file):
      with open(hand_file, encoding="utf-8") as f:
        hands[py] = json.load(f)
    target = (hands[py] or {}).get("target", {})
    requests.append({"file": os.path.join(py_dir, py), "name": "",
                     "arch": target.get("arch", "sm_90a"),
                     "profile": target.get("profile", "mosaic"), "jax": target.get("jax", "")})
  # One Python process imports them all (cfjax_import.py --serve: the code behind `collfuzz
  # import`, whose command line tests/cli/import_cli_test.cmake checks); the replay below parses
  # every imported case with collfuzz's own parser.
  proc = subprocess.run([args.python, os.path.join(ROOT, "harness/jax/cfjax_import.py"), "--serve"],
                        input="".join(json.dumps(r) + "\n" for r in requests), text=True,
                        capture_output=True, check=False)
  answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
  if len(answers) != len(requests):
    print(f"the importer answered {len(answers)} of {len(requests)}:\n{proc.stderr[-3000:]}")
    return 1
  for py, ans in zip(pys, answers):
    stem = py[:-3]
    hand = hands[py]

    class r:  # the answer as `collfuzz import` would give it
      returncode = 0 if "case" in ans else ans.get("code", 3)
      stderr = "" if "case" in ans else "collfuzz: error: " + ans["error"]
      stdout = json.dumps(ans.get("case"))

    if r.returncode != 0:
      # A test that asserts an error JAX raises while tracing: the kernel has no jaxpr to import,
      # and the error the import reports is the one the test asserts.
      want = ((hand or {}).get("expect") or {})
      want = want.get("mosaic", want) if "kind" not in want else want
      d = want.get("diagnostic", {}) if want.get("kind") == "rejected" else {}
      if r.returncode == 2 and d and "tracing the kernel raised" in r.stderr and \
          f"{d.get('exception')}: {d.get('message')}" in r.stderr:
        rows.append((stem, f"not imported: JAX raises the error the test asserts while tracing "
                     f"({d.get('exception')}), before there is a jaxpr"))
        traced_error += 1
        continue
      rows.append((stem, f"import refused (exit {r.returncode}): {r.stderr.strip()[:300]}"))
      bad += 1
      continue
    imported = json.loads(r.stdout)
    if hand is None:
      rows.append((stem, "imported (no hand-written case)"))
      continue
    d = first_difference(canonical(hand), canonical(imported))
    if d:
      rows.append((stem, f"differs from the hand-written case: {d}"))
      bad += 1
      continue
    same += 1
    mapping = dict(zip(name_map(hand), name_map(imported)))
    imported["name"] = hand["name"] + ".imported"
    imported["notes"] = f"imported by `collfuzz import {py}`; expect from {stem}.json"
    if "expect" in hand:
      imported["expect"] = rename(hand["expect"], mapping)
    with open(os.path.join(cases_dir, stem + ".json"), "w", encoding="utf-8") as f:
      json.dump(imported, f, indent=1)
    rows.append((stem, "imported, the same case as the hand-written one"))
  replay_json = os.path.join(work, "replay.json")
  r = subprocess.run([args.collfuzz, "replay", cases_dir, "--executors", args.executors,
                      "--python", args.python, "--json-out", replay_json],
                     capture_output=True, text=True, check=False)
  print(r.stdout.strip())
  if r.returncode != 0:
    bad += 1
  for stem, what in rows:
    print(f"{stem}: {what}")
  print(f"{same} of {len(rows)} imported and equal to their hand-written cases, {traced_error} "
        f"raising the test's error while tracing; replay on "
        f"{args.executors}: exit {r.returncode}; {time.monotonic() - t0:.1f} s")
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main())
