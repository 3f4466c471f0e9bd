#!/usr/bin/env python3
"""Every case file against schema/case.schema.json (with schema/outcome.schema.json for `expect`).

    .venv-validate/bin/python tools/validate_case_schema.py corpus/ [more files or folders]
    build/release/collfuzz gen --count 500 --seed 7 | .venv-validate/bin/python tools/validate_case_schema.py -

A folder is searched for *.json recursively; `-` reads JSON lines (one case each) from stdin.
Prints each invalid case with the JSON path of its first error and exits 1 if any is invalid
(2 when nothing was checked). Needs jsonschema (.venv-validate: ci/setup-validators.sh); exits 77
without it. The ctest `case_schema` runs it on the corpus and on generated cases.
"""

from __future__ import annotations

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def validator():
  import jsonschema  # pylint: disable=import-outside-toplevel
  from referencing import Registry, Resource  # pylint: disable=import-outside-toplevel
  with open(os.path.join(ROOT, "schema/case.schema.json"), encoding="utf-8") as f:
    case = json.load(f)
  with open(os.path.join(ROOT, "schema/outcome.schema.json"), encoding="utf-8") as f:
    outcome = json.load(f)
  base = case["$id"].rsplit("/", 1)[0]
  registry = Registry().with_resources([
      (case["$id"], Resource.from_contents(case)),
      (outcome.get("$id", base + "/outcome.schema.json"), Resource.from_contents(outcome)),
      (base + "/outcome.schema.json", Resource.from_contents(outcome)),
  ])
  return jsonschema.Draft202012Validator(case, registry=registry)


def cases(args):
  for a in args:
    if a == "-":
      for n, line in enumerate(sys.stdin, 1):
        if line.strip():
          yield f"<stdin>:{n}", json.loads(line)
    elif os.path.isdir(a):
      for f in sorted(glob.glob(os.path.join(a, "**", "*.json"), recursive=True)):
        with open(f, encoding="utf-8") as fh:
          yield f, json.load(fh)
    else:
      with open(a, encoding="utf-8") as fh:
        yield a, json.load(fh)


def main(argv: list[str]) -> int:
  try:
    v = validator()
  except ImportError:
    print("validate_case_schema: no jsonschema (ci/setup-validators.sh makes .venv-validate)")
    return 77
  checked = bad = 0
  for where, c in cases(argv or [os.path.join(ROOT, "corpus")]):
    checked += 1
    errors = sorted(v.iter_errors(c), key=lambda e: len(list(e.absolute_path)))
    if errors:
      bad += 1
      e = errors[0]
      path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
      print(f"{where}: {path}: {e.message[:300]}")
  print(f"{checked} case(s) checked against schema/case.schema.json, {bad} invalid")
  if checked == 0:
    return 2
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
