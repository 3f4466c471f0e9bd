"""A known JAX bug: a TMA copy into an SMEM ref indexed after a transpose gets the wrong
permutation.

`smem.transpose((1, 2, 0, 3)).at[:, :, 1]` of an SMEM ref R of shape (2, A, B, 32) is R[1]
itself (numpy: R.transpose(1, 2, 0, 3)[:, :, 1] == R[1]). The Mosaic GPU lowering commutes the
indexer before the transpose (jax/_src/pallas/mosaic_gpu/core.py `commute_transpose_indexer`,
0.11.2 and 0.12.0.1 alike): it drops the permutation entries equal to the *view's* indexed
positions ([2]) instead of the entries at those positions (perm[2] = 0), and renumbers, giving
R.at[1].transpose((1, 0, 2)) where the identity is right. Under Lane semantics a copy of x (A, B,
32) into that ref then lowers with the wrong transpose:
- A != B (4, 8): `ValueError: Expected the SMEM reference to have the same shape as the
  transformed slice: (4, 8, 32) != (8, 4, 32)` for a correct kernel;
- A == B (8, 8): it lowers, and the kernel writes x.transpose(1, 0, 2) into R[1]: wrong data, no
  error (collfuzz's jax-ir evaluates the lowered module on the CPU and shows it).
GPU interpret mode, and Warpgroup semantics, give R[1] == x. What JAX should do: drop
`transpose.permutation[d]` for each removed view position d (and renumber the rest).

collfuzz's case language writes an index before its transpose only (`collfuzz import` commutes a
transpose-then-index as JAX means it to, and refuses this one: docs/python.md), so this is a
standalone script. Found 2026-12-07 while the transpose construct was added.

Run: python THIS_FILE.py [--expect-bug]. It lowers the kernel for CUDA on this CPU (A = 4, B = 8)
and evaluates the lowered module of A = B = 8 with jax-ir (harness/jax/cfjax_ir.py). Exits 0 when
both are right (the bug is fixed), else raises AssertionError. `--expect-bug` inverts it for the
test command: exit 0 while the bug is still there.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness", "jax"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402


def case(a, b, semantics="lane"):
  """R: float32 (2, a, b, 32); x: (a, b, 32) copied into R[0], then into the view; R stored."""
  fill = {"pattern": "arange", "start": 0, "step": 1}
  wait = {"op": "barrier_wait", "barrier": {"alloc": "bar"}}
  return {"format": 1, "name": f"transpose_then_index_{a}x{b}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics},
          "inputs": [{"name": "x", "shape": [a, b, 32], "dtype": "float32", "fill": fill}],
          "outputs": [{"name": "out", "shape": [2, a, b, 32], "dtype": "float32"}],
          "program": [{"op": "run_scoped", "allocs": [
              {"name": "smem", "kind": "smem", "shape": [2, a, b, 32], "dtype": "float32"},
              {"name": "bar", "kind": "barrier"}], "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x"},
               "dst": {"alloc": "smem", "index": [0]}, "barrier": {"alloc": "bar"}}, wait,
              {"op": "copy_gmem_to_smem", "src": {"input": "x"},
               "dst": {"alloc": "smem", "index": [1]}, "barrier": {"alloc": "bar"}}, wait,
              {"op": "copy_smem_to_gmem", "src": {"alloc": "smem"}, "dst": {"output": "out"}}]}]}


def run(mode, a, b):
  """The second copy written as JAX's users write it: smem.transpose((1, 2, 0, 3)).at[:, :, 1]."""
  import cfjax_xla_flags  # pylint: disable=import-outside-toplevel
  cfjax_xla_flags.pin_cpu_isa()
  import cfjax_translate  # pylint: disable=import-outside-toplevel
  from cfjax_execute import Executor  # pylint: disable=import-outside-toplevel
  plain = cfjax_translate.smem_copy_ref

  def through_the_view(use, env, path):
    if use.get("index") == [1] and path.endswith("body[2].dst"):
      return env["smem"].transpose((1, 2, 0, 3)).at[:, :, 1]
    return plain(use, env, path)

  cfjax_translate.smem_copy_ref = through_the_view
  try:
    return Executor(mode).run(json.loads(json.dumps(case(a, b))))
  finally:
    cfjax_translate.smem_copy_ref = plain


def problems():
  import jax  # pylint: disable=import-outside-toplevel
  found = []
  lowered = run("lower", 4, 8)
  if lowered["kind"] == "rejected":
    d = lowered["diagnostic"]
    found.append(f"A=4, B=8 lowers with {d['exception']}: {d['message']}")
  o = run("ir", 8, 8)
  if o["kind"] != "completed":
    found.append(f"A=B=8 does not run on jax-ir: {str(o)[:300]}")
  else:
    got = np.frombuffer(bytes.fromhex(o["outputs"][0]["hex"]), np.float32).reshape(2, 8, 8, 32)
    x = np.arange(8 * 8 * 32, dtype=np.float32).reshape(8, 8, 32)
    if not np.array_equal(got[1], x):
      how = " (x.transpose(1, 0, 2))" if np.array_equal(got[1], x.transpose(1, 0, 2)) else ""
      found.append(f"A=B=8 lowers and writes R[1] != x{how}")
  return found, jax.__version__


def main():
  found, version = problems()
  if "--expect-bug" in sys.argv[1:]:
    assert found, f"JAX {version}: the transpose-then-index copy is right: the bug is fixed"
    print(f"the bug is still there in JAX {version}: " + "; ".join(found))
    return
  assert not found, f"JAX {version}: " + "; ".join(found)
  print(f"JAX {version}: the transpose-then-index copy is right: the bug is fixed")


if __name__ == "__main__":
  main()
