"""Cases and kernels shared by the SMEM-transform tests (test_smem_transforms.py,
test_smem_transforms_import.py): JAX's tests/pallas/mosaic_gpu_test.py
PallasCallTest.test_tma_load_multicast as Python (KERNEL_SRC, for `collfuzz import`) and as the
case the import gives (multicast_case), and small cluster-of-2 cases of a tiled/swizzled buffer
(small_case)."""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

T128 = [{"tiling": [8, 64]}, {"swizzle": 128}]

# JAX's test, one parameter combination per file (COLLECTIVE, NONCOLLECTIVE and SIZE substituted):
# the kernel as the test writes it is corpus/jax-tests/py/_tma_load_multicast.py's, called here
# with plgpu.kernel's default (Warpgroup) lowering semantics, as multicast_case writes the case.
KERNEL_SRC = f'''\
"""PallasCallTest.test_tma_load_multicast(collective_dims=COLLECTIVE, noncollective_dims=NONCOLLECTIVE,
collective_dim_size=SIZE), under Warpgroup semantics."""
import sys

sys.path.insert(0, {os.path.join(ROOT, "corpus", "jax-tests", "py")!r})

from jax.experimental.pallas import mosaic_gpu as plgpu  # noqa: E402

from _tma_load_multicast import kernel_and_args  # noqa: E402


def collfuzz_case():
  return kernel_and_args(COLLECTIVE, NONCOLLECTIVE, SIZE, plgpu.LoweringSemantics.Warpgroup)
'''

COMBOS = (("xy", "z", 2), ("x", "", 4), ("xz", "y", 2))


def kernel_src(collective="xy", noncollective="z", size=2) -> str:
  return (KERNEL_SRC.replace("NONCOLLECTIVE", repr(tuple(noncollective)))
          .replace("COLLECTIVE", repr(tuple(collective))).replace("SIZE", str(size)))


def cluster_of(collective, noncollective, size):
  cluster = [1, 1, 1]
  for d in collective:
    cluster["xyz".index(d)] = size
  for d in noncollective:
    cluster["xyz".index(d)] = 2
  return cluster


def shape_of(collective, noncollective, size):
  cluster = cluster_of(collective, noncollective, size)
  c = math.prod(cluster["xyz".index(d)] for d in collective)
  return (math.prod(cluster) // c, c * 8, 64)


def _index(axes, cluster, scale=1):
  """cluster_id(axes) * scale as a case's index: an integer (no axes), or a dynamic index whose
  terms are the sorted axes' (stride * scale), as `collfuzz import` reads the sum."""
  terms, stride = [], 1
  for d in sorted(axes):
    terms.append((d, stride * scale))
    stride *= cluster["xyz".index(d)]
  if not terms:
    return 0
  e = {"axis": terms[0][0]}
  if terms[0][1] != 1:
    e["mul"] = terms[0][1]
  if terms[1:]:
    e["plus"] = [dict({"axis": d}, **({"mul": m} if m != 1 else {})) for d, m in terms[1:]]
  return e


def cluster_index(axes, cluster, coords) -> int:
  idx, stride = 0, 1
  for d in sorted(axes):
    idx += coords["xyz".index(d)] * stride
    stride *= cluster["xyz".index(d)]
  return idx


def x_array(collective="xy", noncollective="z", size=2):
  shape = shape_of(collective, noncollective, size)
  return np.arange(math.prod(shape), dtype=np.float16).reshape(shape)


def multicast_case(collective="xy", noncollective="z", size=2, profile="interpret"):
  """The case of test_tma_load_multicast(collective, noncollective, size), as `collfuzz import`
  writes it (names aside): its input's fill is what the import infers for the test's np.arange."""
  import cfjax_import_kernel  # pylint: disable=import-outside-toplevel
  cluster = cluster_of(collective, noncollective, size)
  shape = shape_of(collective, noncollective, size)
  fill, why = cfjax_import_kernel.infer_fill(x_array(collective, noncollective, size), "float16")
  assert fill is not None, why
  nc = _index(noncollective, cluster)
  rows = {"start": _index(collective, cluster, 8), "size": 8}
  return {
      "format": 1, "name": f"tma_load_multicast_{collective}_{noncollective}_{size}",
      "mesh": {"grid": cluster, "grid_names": ["grid_x", "grid_y", "grid_z"],
               "cluster": cluster, "cluster_names": ["x", "y", "z"]},
      "target": {"arch": "sm_90a", "semantics": "warpgroup", "entry": "kernel",
                 "profile": profile},
      "inputs": [{"name": "x", "shape": list(shape), "dtype": "float16", "fill": fill}],
      "outputs": [{"name": "out", "shape": list(shape), "dtype": "float16"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "smem", "kind": "smem", "shape": list(shape[1:]), "dtype": "float16",
           "transforms": T128},
          {"name": "tma_barrier", "kind": "barrier", "num_arrivals": 1, "num_barriers": []}],
          "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [nc]},
               "dst": {"alloc": "smem"}, "barrier": {"alloc": "tma_barrier"},
               "collective_axes": list(collective)},
              {"op": "barrier_wait", "barrier": {"alloc": "tma_barrier"}},
              {"op": "copy_smem_to_gmem", "src": {"alloc": "smem", "index": [rows]},
               "dst": {"output": "out", "index": [nc, rows]}}]}],
  }


def small_case(shape, dtype, transforms, semantics="warpgroup", profile="interpret",
               smem_shape=None, dst_index=None, store=None):
  """A cluster of 2 (axis x): each CTA loads x (of `shape`) into smem (`smem_shape`, default
  `shape`, with `transforms`; at `dst_index`), waits, and stores smem (`store` = (SMEM index,
  output index); default whole) to out."""
  st = {"op": "copy_smem_to_gmem", "src": {"alloc": "smem"}, "dst": {"output": "out"}}
  if store is not None:
    st["src"]["index"], st["dst"]["index"] = store
  load = {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "smem"},
          "barrier": {"alloc": "bar"}}
  if dst_index is not None:
    load["dst"]["index"] = dst_index
  return {
      "format": 1, "name": "smem_transforms_small",
      "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": list(shape), "dtype": dtype}],
      "outputs": [{"name": "out", "shape": list(shape), "dtype": dtype}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "smem", "kind": "smem", "shape": list(smem_shape or shape), "dtype": dtype,
           "transforms": transforms},
          {"name": "bar", "kind": "barrier"}],
          "body": [load, {"op": "barrier_wait", "barrier": {"alloc": "bar"}}, st]}],
  }


def buffers(out) -> dict:
  """(rank, alloc) -> the buffer's bytes."""
  return {(c["rank"], b["alloc"]): bytes.fromhex(b["hex"]) for c in out["ctas"]
          for b in c["buffers"]}


def written(out, esz: int, k=0) -> bytes:
  """The bytes of output k's written elements (its `written` ranges; `esz` bytes an element), in
  order."""
  o = out["outputs"][k]
  data = bytes.fromhex(o["hex"])
  return b"".join(data[b * esz:e * esz] for b, e in o["written"])
