#!/usr/bin/env python3
# Needs numpy (the test computes its input with it): run it with .venv-jax/bin/python.
"""Writes JAX's test_tma_load_multicast, every parameter the test runs, into corpus/jax-tests:

    .venv-jax/bin/python tools/jax_tests_tma_load_multicast.py [--dir corpus/jax-tests]

For each (collective_dims, noncollective_dims, collective_dim_size) of the test's
parameterization whose cluster has at most 16 CTAs (the test skips the rest: "Cluster is too big"
on a GPU whose non-portable maximum is 16), and each of the two classes that run it
(PallasCallTest under Lane semantics; PallasCallWGTest, which inherits it, under Warpgroup: the
`tma_load_multicast_wg__*` files), two files:
- py/tma_load_multicast__{cd}_{size}[_{nd}].py, which calls the test's kernel
  (py/_tma_load_multicast.py) with those parameters, for `collfuzz import`;
- tma_load_multicast__....json, the case translated by hand from the test, with the expectation
  derived from the test's assertion and the spec, not from a collfuzz run: the kernel completes,
  out == x (np.testing.assert_array_equal(kernel(x), x)), and every CTA's SMEM buffer holds
  x[noncollective_idx] (the multicast fills the whole buffer of every collective CTA), laid out by
  the tiling and swizzle (docs/case-format.md, "SMEM transforms": the expectation's regions are
  logical, the comparison physical).
tools/jax_tests_import.py then imports each .py and checks it against its .json.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parameters():
  """The test's parameterization, in its order."""
  for cd in itertools.chain.from_iterable(itertools.combinations("xyz", n) for n in range(1, 4)):
    for nd in itertools.chain.from_iterable(itertools.combinations("xyz", n) for n in range(3)):
      for size in (1, 2, 4):
        if all(d not in nd for d in cd):
          yield cd, nd, size


# class -> (file prefix, lowering semantics as the case and as plgpu spell them)
CLASSES = {"PallasCallTest": ("tma_load_multicast", "lane", "Lane"),
           "PallasCallWGTest": ("tma_load_multicast_wg", "warpgroup", "Warpgroup")}


def stem(cd, nd, size, cls="PallasCallTest") -> str:
  prefix = CLASSES[cls][0]
  return f"{prefix}__{''.join(cd)}_{size}" + (f"_{''.join(nd)}" if nd else "")


def index_expr(axes, sizes, mul):
  """cluster_id(axes) * mul as a case index expression (sorted axes, strides by their sizes)."""
  terms, stride = [], 1
  for d in sorted(axes):
    terms.append((d, stride * mul))
    stride *= sizes[d]
  if not terms:
    return None
  expr = {"axis": terms[0][0], "mul": terms[0][1], "add": 0}
  if len(terms) > 1:
    expr["plus"] = [{"axis": d, "mul": m} for d, m in terms[1:]]
  return expr


def case(cd, nd, size, cls="PallasCallTest") -> dict:
  cluster = [1, 1, 1]
  for d in cd:
    cluster["xyz".index(d)] = size
  for d in nd:
    cluster["xyz".index(d)] = 2
  sizes = dict(zip("xyz", cluster))
  collective_size = math.prod(sizes[d] for d in cd)
  noncollective_size = math.prod(cluster) // collective_size
  shape = [noncollective_size, collective_size * 8, 64]
  x = np.arange(np.prod(shape), dtype=np.float16)
  n = int(np.prod(shape))
  # np.arange in float16: exact up to 2048, then rounded; an arange fill holds only exact values.
  fill = ({"pattern": "arange", "start": 0, "step": 1} if n <= 2049 else
          {"pattern": "values", "values": [int(v) for v in x]})
  nc = index_expr(nd, sizes, 1)
  nc_entry = nc if nc else 0
  ci = index_expr(cd, sizes, 8)
  rows = {"start": ci, "size": 8}
  ctas = []
  for r, (cx, cy, cz) in enumerate(itertools.product(*(range(c) for c in cluster))):
    coords = {"x": cx, "y": cy, "z": cz}
    nci, stride = 0, 1
    for d in sorted(nd):
      nci += coords[d] * stride
      stride *= sizes[d]
    ctas.append({"rank": r, "coords": [cx, cy, cz],
                 "barriers": [{"alloc": "tma_barrier", "index": 0}], "buffers": [
        {"alloc": "smem", "regions": [{"at": [0, 0], "from": {"input": "x", "index": [nci]}}]}]})
  name = stem(cd, nd, size, cls)
  semantics = CLASSES[cls][1]
  return {
      "format": 1,
      "name": f"jax_test.{name}",
      "notes": (
          f"tests/pallas/mosaic_gpu_test.py::{cls}.test_tma_load_multicast"
          f"(collective_dims={cd!r}, noncollective_dims={nd!r}, collective_dim_size={size}) "
          "(JAX 0.11.2): a tiled (8, 64), 128-byte swizzled f16 SMEM buffer filled by a multicast "
          "of x.at[noncollective_idx] over the collective axes; each collective CTA stores its 8 "
          "rows smem.at[pl.ds(8 * collective_idx, 8)] back. The test asserts out == x; the "
          "expectation adds every CTA's buffer, x[noncollective_idx] laid out by the transforms. "
          "The input is the test's np.arange(..., dtype=float16)"
          + (" (past 2048 float16 rounds: a values fill of its numbers)" if n > 2049 else
             ", an arange fill")
          + f"; scratch_types are a run_scoped; {CLASSES[cls][2]} semantics, as {cls}'s "
          "self.kernel sets. Written by tools/jax_tests_tma_load_multicast.py."),
      "mesh": {"grid": cluster, "grid_names": ["grid_x", "grid_y", "grid_z"],
               "cluster": cluster, "cluster_names": ["x", "y", "z"]},
      "target": {"arch": "sm_90a", "semantics": semantics},
      "inputs": [{"name": "x", "shape": shape, "dtype": "float16", "fill": fill}],
      "outputs": [{"name": "out", "shape": shape, "dtype": "float16"}],
      "program": [{
          "op": "run_scoped",
          "allocs": [
              {"name": "smem", "kind": "smem", "shape": shape[1:], "dtype": "float16",
               "transforms": [{"tiling": [8, 64]}, {"swizzle": 128}]},
              {"name": "tma_barrier", "kind": "barrier", "num_barriers": []}],
          "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [nc_entry]},
               "dst": {"alloc": "smem"}, "barrier": {"alloc": "tma_barrier"},
               "collective_axes": list(cd)},
              {"op": "barrier_wait", "barrier": {"alloc": "tma_barrier"}},
              {"op": "copy_smem_to_gmem", "src": {"alloc": "smem", "index": [rows]},
               "dst": {"output": "out", "index": [nc_entry, rows]}}]}],
      "expect": {"kind": "completed",
                 "outputs": [{"name": "out", "regions": [{"at": [0, 0, 0],
                                                          "from": {"input": "x"}}]}],
                 "ctas": ctas},
  }


PY = '''"""For `collfuzz import`: JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_tma_load_multicast with
collective_dims={cd!r}, noncollective_dims={nd!r}, collective_dim_size={size}: the test's kernel
(_tma_load_multicast.py) with these parameters. The hand-written case is ../{stem}.json.
Written by tools/jax_tests_tma_load_multicast.py.
"""
from _tma_load_multicast import kernel_and_args


def collfuzz_case():
  return kernel_and_args({cd!r}, {nd!r}, {size})
'''

PY_WG = '''"""For `collfuzz import`: JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallWGTest.test_tma_load_multicast (PallasCallTest's test,
inherited, under Warpgroup lowering semantics) with collective_dims={cd!r},
noncollective_dims={nd!r}, collective_dim_size={size}: the test's kernel (_tma_load_multicast.py)
with these parameters. The hand-written case is ../{stem}.json.
Written by tools/jax_tests_tma_load_multicast.py.
"""
from jax.experimental.pallas import mosaic_gpu as plgpu

from _tma_load_multicast import kernel_and_args


def collfuzz_case():
  return kernel_and_args({cd!r}, {nd!r}, {size}, plgpu.LoweringSemantics.Warpgroup)
'''


def dumps(c: dict) -> str:
  """JSON with one array of fill values per line (thousands of numbers)."""
  values = c["inputs"][0]["fill"].get("values")
  if values is None:
    return json.dumps(c, indent=1) + "\n"
  c = json.loads(json.dumps(c))
  c["inputs"][0]["fill"]["values"] = "@VALUES@"
  text = json.dumps(c, indent=1)
  return text.replace('"@VALUES@"', json.dumps(values)) + "\n"


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--dir", default=os.path.join(ROOT, "corpus/jax-tests"))
  args = ap.parse_args()
  written = 0
  for cd, nd, size in parameters():
    cluster = [1, 1, 1]
    for d in cd:
      cluster["xyz".index(d)] = size
    for d in nd:
      cluster["xyz".index(d)] = 2
    if math.prod(cluster) > 16:
      continue  # the test: self.skipTest("Cluster is too big.")
    for cls in CLASSES:
      s = stem(cd, nd, size, cls)
      with open(os.path.join(args.dir, s + ".json"), "w", encoding="utf-8") as f:
        f.write(dumps(case(cd, nd, size, cls)))
      with open(os.path.join(args.dir, "py", s + ".py"), "w", encoding="utf-8") as f:
        f.write((PY if cls == "PallasCallTest" else PY_WG).format(cd=cd, nd=nd, size=size, stem=s))
      written += 1
  print(f"{written} cases written to {args.dir}")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
