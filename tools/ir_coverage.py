#!/usr/bin/env python3
"""jax-ir's coverage and agreement on the corpus (docs/ir-executor.md, "Figures").

    tools/ir_coverage.py [--python .venv-jax/bin/python] [--collfuzz build/release/collfuzz] [corpus/]

Accepted compiler-profile cases: the corpus cases judged by the executor's JAX release (unpinned,
or pinned to it) whose reference prediction for the mosaic profile is `completed` or `deadlock`.
Of those it prints how many jax-ir ran (rather than marked unavailable), how many of those agree
with the reference, and the unavailable reasons with their counts.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def main() -> int:
  ap = argparse.ArgumentParser()
  ap.add_argument("--python", default=".venv-jax/bin/python")
  ap.add_argument("--collfuzz", default="build/release/collfuzz")
  ap.add_argument("corpus", nargs="?", default="corpus/")
  a = ap.parse_args()
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "replay.json")
    subprocess.run([a.collfuzz, "replay", a.corpus, "--executors", "jax-ir", "--python", a.python,
                    "--json-out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    with open(out, encoding="utf-8") as f:
      checks = [c for c in json.load(f) if c["executor"] == "jax-ir"]
  files = sorted({c["file"] for c in checks})
  ref = subprocess.run([a.collfuzz, "run", *files, "--json", "--profile", "mosaic"],
                       capture_output=True, text=True, check=False)
  ref_kind = {r["file"]: r["reference"]["kind"] for r in json.loads(ref.stdout)}
  version = None
  accepted = ran = agree = 0
  reasons = collections.Counter()
  disagreements = []
  for c in checks:
    version = c.get("jax_version") or version
    if c["status"] == "skip" and c["message"].startswith("version mismatch"):
      continue
    if ref_kind.get(c["file"]) not in ("completed", "deadlock"):
      continue
    accepted += 1
    if c["status"] == "skip":
      reasons[c["message"].split("\n")[0][:100]] += 1
      continue
    ran += 1
    if c["status"] == "pass":
      agree += 1
    else:
      disagreements.append(f"{c['case']}: {c['message'][:200]}")
  print(f"jax-ir on JAX {version}: {ran} of {accepted} accepted compiler-profile cases run "
        f"({100.0 * ran / max(accepted, 1):.1f} %), {agree} of {ran} agree with the reference")
  for why, n in reasons.most_common():
    print(f"  unavailable {n}x: {why}")
  for d in disagreements:
    print(f"  disagrees: {d}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
