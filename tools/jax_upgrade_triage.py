#!/usr/bin/env python3
"""Turns a new JAX release into a triage list (docs/upgrading-jax.md).

    ci/setup-jax.sh 0.12.0.1                      # a venv for the new release (pinned requirements)
    tools/jax_upgrade_triage.py --python .venv-jax-0.12.0.1/bin/python --against 0.11.2 \
        --campaign 300 --out /tmp/triage

Replays the corpus (cases pinned to another release than --against are left out: they pin that
release's outcome) and a short campaign (`collfuzz gen --count N --seed S`) through the JAX
executor of the new release (interpret mode and the lowering, `harness/jax/cfjax_replay.py`), asks
the reference of release --against (the newest modelled one) for its prediction of each case
(`collfuzz run --json --jax`), and groups the disagreements by the rule the reference fired (or
"accepted") and what the new release did instead. Writes OUT/triage.md (the list, largest group
first, one example case per group) and OUT/disagreements.jsonl (every one); prints the list.

Compared: the outcome kind and the diagnostic's exception and message (interpret mode's object
addresses normalised). Lower mode only lowers, so a case the reference accepts agrees with any
"lowered without an error" answer. Deep state (barriers, bytes) is the oracles' job: once a change
is modelled, `collfuzz replay` with the new venv's --python compares everything.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def case_files(paths: list[str]) -> list[str]:
  out = []
  for p in paths:
    if os.path.isdir(p):
      for dirpath, _, names in os.walk(p):
        out += [os.path.join(dirpath, n) for n in names if n.endswith(".json")]
    else:
      out.append(p)
  return sorted(out)


def norm(msg: str | None) -> str:
  return re.sub(r"0x[0-9a-f]+", "0x...", msg or "")


def shape(msg: str) -> str:
  """A message with its numbers and quoted names blanked: disagreements that differ only there group together."""
  s = re.sub(r"\d+", "N", norm(msg))
  s = re.sub(r"'[^']*'", "'_'", s)
  return s[:160]


def reference_outcomes(collfuzz: str, files: list[str], jax: str, profile: str) -> dict[str, dict]:
  out = {}
  for i in range(0, len(files), 200):
    chunk = files[i:i + 200]
    p = subprocess.run([collfuzz, "run", "--json", "--jax", jax, "--profile", profile, *chunk],
                       capture_output=True, text=True, check=False)
    if p.returncode not in (0, 1):
      sys.exit(f"collfuzz run failed ({p.returncode}): {p.stderr[-2000:]}")
    for entry in json.loads(p.stdout):
      out[os.path.abspath(entry["file"])] = entry["reference"]
  return out


def jax_outcomes(python: str, mode: str, files: list[str], out_path: str, timeout: float) -> dict[str, dict]:
  subprocess.run([sys.executable, os.path.join(ROOT, "harness/jax/cfjax_replay.py"), "--python", python,
                  "--mode", mode, "--timeout", str(timeout), "--quiet", "--out", out_path, *files],
                 check=True)
  res = {}
  with open(out_path, encoding="utf-8") as f:
    for line in f:
      r = json.loads(line)
      res[os.path.abspath(r["file"])] = r["outcome"]
  return res


def disagreement(mode: str, ref: dict, got: dict) -> str | None:
  rk, gk = ref["kind"], got["kind"]
  rd, gd = ref.get("diagnostic") or {}, got.get("diagnostic") or {}
  if mode == "lower":
    if gk == "unavailable" and "lowered" in (got.get("reason") or ""):
      gk = "lowered"
    if rk != "rejected" or rd.get("stage") in ("compile", "launch"):
      return None if gk == "lowered" else f"reference accepts (lowers); {gk}"
    if gk != "rejected":
      return f"reference rejects; {gk}"
  else:
    if rk == "deadlock" and gk == "timeout":
      return None  # interpret mode blocks forever on a wait that never completes
    if gk in ("unavailable", "crash"):
      return f"{gk}: {(got.get('reason') or '')[:120]}"
    if rk != gk:
      return f"reference {rk}; {gk}"
    if rk != "rejected":
      return None
  if rd.get("exception") != gd.get("exception") or norm(rd.get("message")) != norm(gd.get("message")):
    return "different diagnostic"
  return None


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--python", required=True, help="the new release's venv python")
  ap.add_argument("--against", default="0.11.2", help="the modelled release to compare with")
  ap.add_argument("--collfuzz", default=os.path.join(ROOT, "build/release/collfuzz"))
  ap.add_argument("--campaign", type=int, default=200, help="generated cases (0: corpus only)")
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--modes", default="lower,interpret")
  ap.add_argument("--timeout", type=float, default=30.0)
  ap.add_argument("--out", default="/tmp/jax-triage")
  ap.add_argument("paths", nargs="*", default=[os.path.join(ROOT, "corpus")])
  args = ap.parse_args()
  t0 = time.monotonic()
  os.makedirs(args.out, exist_ok=True)
  new = subprocess.run([args.python, "-c", "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)"],
                       capture_output=True, text=True, check=True).stdout.split()

  files = []
  for f in case_files(args.paths):
    target = json.load(open(f, encoding="utf-8")).get("target", {})
    if target.get("jax", args.against) == args.against:
      files.append(os.path.abspath(f))
  if args.campaign:
    gen_dir = os.path.join(args.out, "campaign")
    os.makedirs(gen_dir, exist_ok=True)
    p = subprocess.run([args.collfuzz, "gen", "--count", str(args.campaign), "--seed", str(args.seed)],
                       capture_output=True, text=True, check=True)
    for i, line in enumerate(p.stdout.splitlines()):
      c = json.loads(line)
      path = os.path.join(gen_dir, f"{i:05d}.json")
      with open(path, "w", encoding="utf-8") as f:
        json.dump(c, f)
      files.append(path)

  rows = []
  for mode in args.modes.split(","):
    profile = "interpret" if mode == "interpret" else "mosaic"
    ref = reference_outcomes(args.collfuzz, files, args.against, profile)
    got = jax_outcomes(args.python, mode, files, os.path.join(args.out, f"{mode}.jsonl"), args.timeout)
    for f in files:
      if f not in ref or f not in got:
        continue
      why = disagreement(mode, ref[f], got[f])
      if why is None:
        continue
      rd, gd = ref[f].get("diagnostic") or {}, got[f].get("diagnostic") or {}
      rows.append({"mode": mode, "file": os.path.relpath(f, ROOT) if f.startswith(ROOT) else f,
                   "reference_rule": rd.get("rule") or ref[f]["kind"], "why": why,
                   "reference": f"{ref[f]['kind']} {rd.get('stage', '')} {rd.get('exception', '')}: {rd.get('message', '')}".strip(),
                   "new": f"{got[f]['kind']} {gd.get('stage', '')} {gd.get('exception', '')}: "
                          f"{gd.get('message', got[f].get('reason', ''))}".strip()})

  with open(os.path.join(args.out, "disagreements.jsonl"), "w", encoding="utf-8") as f:
    for r in rows:
      f.write(json.dumps(r) + "\n")
  groups = collections.defaultdict(list)
  for r in rows:
    groups[(r["mode"], r["reference_rule"], r["why"], shape(r["new"]))].append(r)
  lines = [f"# JAX {new[0]} (jaxlib {new[1]}) against the reference of {args.against}", "",
           f"{len(files)} cases ({args.campaign} generated, seed {args.seed}), modes {args.modes}: "
           f"{len(rows)} disagreements in {len(groups)} groups, {time.monotonic() - t0:.0f} s.", "",
           "| # | mode | reference rule | disagreement | cases | example | reference says | new release says |",
           "|---|---|---|---|---|---|---|---|"]
  for i, ((mode, rule, why, _), rs) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1])), 1):
    ex = rs[0]
    cell = lambda s: s.replace("|", "\\|")[:220]  # noqa: E731
    lines.append(f"| {i} | {mode} | `{rule}` | {why} | {len(rs)} | `{ex['file']}` | {cell(ex['reference'])} | "
                 f"{cell(ex['new'])} |")
  text = "\n".join(lines) + "\n"
  with open(os.path.join(args.out, "triage.md"), "w", encoding="utf-8") as f:
    f.write(text)
  print(text)
  return 0


if __name__ == "__main__":
  sys.exit(main())
