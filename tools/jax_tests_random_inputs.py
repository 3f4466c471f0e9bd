#!/usr/bin/env python3
"""Gives corpus/jax-tests' hand translations the random inputs their tests draw.

JAX's test_copy_gmem_to_smem_partitioned (every parameter) and test_copy_gmem_to_smem_replicated
call their kernels on `jax.random.uniform` arrays:
  partitioned: ka, kb = jax.random.split(jax.random.key(0));
               a = uniform(ka, (128, 128) or (1, 128, 128)); b = uniform(kb, (128, 128))
  replicated:  a = uniform(jax.random.key(0), (64, 64))
This writes those as `jax_random` fills (docs/case-format.md "Fills") and, for the partitioned
tests, the output the test asserts, `out == a + b` (`a[0] + b` when squeezed), computed here in
float32 (numpy) from the fills' numbers (harness/jax/cfjax_fill.py, held bit for bit to each
JAX release's jax.random by tests/jax/test_jax_random.py). Nothing here runs a kernel.

  python3 tools/jax_tests_random_inputs.py [--check]
"""

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
import cfjax_fill  # noqa: E402

DIR = os.path.join(ROOT, "corpus", "jax-tests")
SPLIT_KEY_0 = {"pattern": "jax_random", "distribution": "uniform", "seed": 0}
NOTE_OLD = ("Random inputs are seeded fills (collfuzz's `random` recipe: integers in [-2047, 2047], "
            "where the test has jax.random.uniform), so out = a + b is exact; its values were "
            "computed from the recipe's formula in docs/case-format.md (splitmix64), not by a "
            "collfuzz run.")
NOTE_NEW = ("The inputs are the test's own: jax.random.uniform of ka, kb = "
            "jax.random.split(jax.random.key(0)) (`jax_random` fills); out = a + b is the test's "
            "assertion, its float32 sums computed by tools/jax_tests_random_inputs.py from the "
            "fills' numbers (docs/case-format.md \"Fills\"), not by a collfuzz run.")
REPL_OLD = ("and the random input (jax.random.uniform(jax.random.key(0), (64, 64))) is a values "
            "fill of its 4,096 numbers.")
REPL_NEW = ("and the random input (jax.random.uniform(jax.random.key(0), (64, 64))) is a "
            "`jax_random` fill of that key.")


def partitioned(case: dict) -> dict:
  a_spec, b_spec = case["inputs"]
  a_spec["fill"] = dict(SPLIT_KEY_0, split=[[2, 0]])
  b_spec["fill"] = dict(SPLIT_KEY_0, split=[[2, 1]])
  a = cfjax_fill.fill_array(a_spec).reshape(128, 128)  # a[0] when squeezed: the same numbers
  b = cfjax_fill.fill_array(b_spec)
  out = (a + b).astype(np.float32)
  (region,) = case["expect"]["outputs"][0]["regions"]
  assert region["at"] == [0, 0] and region["shape"] == [128, 128], region
  region["values"] = [float(x) if not float(x).is_integer() else int(x) for x in out.reshape(-1)]
  if NOTE_OLD in case["notes"]:
    case["notes"] = case["notes"].replace(NOTE_OLD, NOTE_NEW)
  assert NOTE_NEW in case["notes"], case["name"]
  return case


def replicated(case: dict) -> dict:
  (a_spec,) = case["inputs"]
  a_spec["fill"] = dict(SPLIT_KEY_0)
  case["notes"] = case["notes"].replace(REPL_OLD, REPL_NEW)
  assert REPL_NEW in case["notes"], case["name"]
  return case


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--check", action="store_true", help="exit 1 if a file would change")
  args = ap.parse_args()
  changed = []
  for name in sorted(os.listdir(DIR)):
    if not name.endswith(".json"):
      continue
    if name.startswith("copy_gmem_to_smem_partitioned__"):
      fix = partitioned
    elif name == "copy_gmem_to_smem_replicated.json":
      fix = replicated
    else:
      continue
    path = os.path.join(DIR, name)
    with open(path, encoding="utf-8") as f:
      text = f.read()
    new = json.dumps(fix(json.loads(text)), indent=1) + "\n"
    if new != text:
      changed.append(name)
      if not args.check:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
          f.write(new)
        os.replace(path + ".tmp", path)
  print(("would change: " if args.check else "wrote: ") + (", ".join(changed) or "nothing"))
  return 1 if args.check and changed else 0


if __name__ == "__main__":
  sys.exit(main())
