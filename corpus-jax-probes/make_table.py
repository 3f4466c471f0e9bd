#!/usr/bin/env python3
"""Renders the probe results of docs/jax-notes.md (appendix) from replay outputs.

    .venv-jax/bin/python harness/jax/cfjax_replay.py --out /tmp/interp.jsonl corpus-jax-probes
    .venv-jax/bin/python harness/jax/cfjax_replay.py --mode lower --out /tmp/lower.jsonl corpus-jax-probes
    python3 corpus-jax-probes/make_table.py /tmp/interp.jsonl /tmp/lower.jsonl > table.md
"""

import json
import os
import sys


def load(path):
  out = {}
  with open(path, encoding="utf-8") as f:
    for line in f:
      r = json.loads(line)
      out[os.path.basename(r["file"])] = r["outcome"]
  return out


def cell(o):
  if o is None:
    return ""
  kind = o.get("kind")
  if kind == "rejected":
    d = o["diagnostic"]
    msg = d["message"].replace("|", "\\|").replace("\n", " ")
    return f"**{d['stage']}** `{d['exception']}`: `{msg}`"
  if kind == "completed":
    parts = []
    for cta in o.get("ctas", []):
      bars = ", ".join(f"{b['alloc']}[{b['index']}] arrivals {b['arrivals']} phases {b['phases']}"
                       for b in cta.get("barriers", []))
      bufs = ", ".join(
          f"{b['alloc']}=" + ("sentinel" if set(bytes.fromhex(b["hex"])) == {0xA5}
                              else b["hex"][:16] + ("…" if len(b["hex"]) > 16 else ""))
          for b in cta.get("buffers", []) if "hex" in b)
      parts.append(f"CTA{cta['rank']}: {bufs}{'; ' if bufs and bars else ''}{bars}")
    if len(parts) > 4:
      parts = parts[:2] + [f"… ({len(parts)} CTAs)"]
    return "completed. " + " / ".join(parts)
  if kind == "unavailable" and "lowered for CUDA" in o.get("reason", ""):
    return "lowers"
  return f"{kind}: {o.get('reason', '')}"


def main():
  interp = load(sys.argv[1])
  lower = load(sys.argv[2]) if len(sys.argv) > 2 else {}
  here = os.path.dirname(os.path.abspath(__file__))
  print("| probe | question | interpret (jax-interpret) | real lowering (jax-lower, sm_90a unless noted) |")
  print("|---|---|---|---|")
  for name in sorted(set(interp) | set(lower)):
    path = os.path.join(here, name)
    if not os.path.exists(path):
      path = os.path.join(here, "hangs", name)
    with open(path, encoding="utf-8") as f:
      notes = json.load(f).get("notes", "").replace("|", "\\|")
    print(f"| `{name[:-5]}` | {notes} | {cell(interp.get(name))} | {cell(lower.get(name))} |")


if __name__ == "__main__":
  main()
