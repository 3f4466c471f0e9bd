"""Checks `collfuzz import tests/cli/import/inputs.py` element for element (run by
tests/cli/import_cli_test.cmake in the JAX venv):

    inputs_check.py CASE.json FROZEN.json

CASE.json is the imported case, FROZEN.json the same after `collfuzz freeze` (the reference's
prediction in `expect`). For every argument the kernel was called with: the case's fill has the
pattern inputs.py names, cfjax_fill (the JAX executors' fill) gives exactly the argument's bytes,
and the reference's predicted output, a copy of the input, holds them too (the C++ fill). Exit 1
naming the first input that differs.
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "harness", "jax"))

import numpy as np  # noqa: E402

import cfjax_fill  # noqa: E402


def main() -> int:
  case = json.load(open(sys.argv[1], encoding="utf-8"))
  frozen = json.load(open(sys.argv[2], encoding="utf-8"))
  spec = importlib.util.spec_from_file_location("inputs", os.path.join(HERE, "inputs.py"))
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  expect = frozen["expect"]
  expect = expect.get("mosaic", expect) if "kind" not in expect else expect
  outputs = {o["name"]: o for o in expect.get("outputs", [])}
  bad = 0
  for k, (arg, pattern) in enumerate(mod.arguments()):
    inp = case["inputs"][k]
    want = cfjax_fill.pack(np.asarray(arg), inp["dtype"])
    got_pattern = inp["fill"]["pattern"]
    python_bytes = cfjax_fill.fill_bytes(inp)
    out = outputs.get(case["outputs"][k]["name"], {})
    cpp_bytes = bytes.fromhex(out.get("hex", ""))
    for what, ok in ((f"fill pattern {got_pattern}, want {pattern}", got_pattern == pattern),
                     ("cfjax_fill's bytes differ from the argument's", python_bytes == want),
                     ("the reference's bytes (C++ fill) differ from the argument's",
                      cpp_bytes == want)):
      if not ok:
        print(f"input {k} ({inp['name']}): {what}")
        bad += 1
  big = case["inputs"][len(mod.arguments())]
  if big["fill"] != {"pattern": "iota"} or big["shape"] != [mod.BIG]:
    print(f"the {mod.BIG}-element input: {big['fill']} {big['shape']}")
    bad += 1
  print(f"{len(mod.arguments())} inputs checked, {bad} differences")
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main())
