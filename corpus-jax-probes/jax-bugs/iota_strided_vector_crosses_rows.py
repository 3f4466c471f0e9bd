"""A known JAX bug: lax.broadcasted_iota in a strided layout whose register vectors cross rows.

Mosaic GPU lowers `plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, d),
plgpu.Layout.WG_STRIDED(shape, vec_size=v))` (Lane; Warpgroup's mosaic_gpu.broadcasted_iota lowers
the same way) through FragmentedArray.broadcasted_iota, which calls FragmentedArray.foreach: for
each register vector it takes the index of the vector's first element (layout.thread_idxs) and
gives its element i the index `(*idx[:-1], idx[-1] + i)`, adding i to the minor dimension only
(fragmented_array.py, 0.11.2 and 0.12.0.1 alike). A strided vector holds v consecutive elements
of the row-major array, so where the minor dimension is no multiple of v a vector crosses into the
next row(s), and those elements get their first row's index and a minor index past the row's end.
`lax.broadcasted_iota(jnp.int16, (512, 2), 0)` cast to vec_size 4 gives row 1 the value 0 (it
should be 1): rows 2k and 2k + 1 both hold 2k. Along the minor dimension the values run past it
(0, 1, 2, 3 where a row of 2 holds 0, 1). The same iota cast to vec_size 2 (a vector per row) is
right. What JAX should do: compute each element's index from its flat position (or refuse a
layout whose vectors cross rows).

collfuzz's case language refuses such an iota (docs/case-format.md "vector_store", the parser
names `vec_size`), and ci/known-jax-bugs.json (`iota_strided_vector_crosses_rows`) points here.
Found by jax-ir on 2026-12-06 (tests/jax/test_vector_iota.py's first version stored exactly this).

Run: python THIS_FILE.py [--expect-bug] [--gpu]. Without a GPU the kernel is lowered for CUDA on
this CPU and its lowered module evaluated by collfuzz's jax-ir (harness/jax/cfjax_ir.py, the
executor that found it); with --gpu it runs on the GPU. Exits 0 when every row holds its index
(the bug is fixed), else raises AssertionError naming the first wrong row. `--expect-bug` inverts
it for the test command (tests/jax/test_known_bugs.py): exit 0 while the bug is still there.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness", "jax"))

import numpy as np  # noqa: E402


def iota_case(vec_size):
  """y: int16[512, 2] = the iota along dim 0 (each row's index), cast to vec_size; as a
  collfuzz case (what cfjax_translate builds the Pallas kernel from)."""
  return {"format": 1, "name": f"iota_512x2_vec{vec_size}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": "lane", "profile": "mosaic"},
          "inputs": [], "outputs": [{"name": "y", "shape": [512, 2], "dtype": "int16"}],
          "program": [{"op": "vector_store", "dst": {"output": "y"},
                       "value": {"iota": {"dimension": 0, "vec_size": vec_size}}}]}


def rows(vec_size, mode):
  """The rows the kernel stores (int16[512, 2]) on `mode` (jax-ir, or the GPU)."""
  os.environ.setdefault("JAX_PLATFORMS", "cpu" if mode == "ir" else "cuda")
  import cfjax_execute  # pylint: disable=import-outside-toplevel
  out = cfjax_execute.Executor(mode).run(iota_case(vec_size))
  assert out["kind"] == "completed", f"the kernel did not run on {mode}: {str(out)[:600]}"
  y = np.frombuffer(bytes.fromhex(out["outputs"][0]["hex"]), np.int16).reshape(512, 2)
  return y, out.get("info", {}).get("jax_version", "?")


def first_wrong_row(y):
  want = np.repeat(np.arange(512, dtype=np.int16)[:, None], 2, axis=1)
  bad = np.nonzero((y != want).any(axis=1))[0]
  return int(bad[0]) if bad.size else None


def main():
  expect_bug = "--expect-bug" in sys.argv[1:]
  mode = "gpu" if "--gpu" in sys.argv[1:] else "ir"
  control, version = rows(2, mode)
  assert first_wrong_row(control) is None, \
      f"JAX {version}: vec_size 2 (a vector per row) is wrong too: {control[:4].tolist()}"
  y, version = rows(4, mode)
  r = first_wrong_row(y)
  if expect_bug:
    assert r is not None, f"JAX {version}: vec_size 4 gives every row its index: the bug is fixed"
    print(f"the bug is still there in JAX {version} ({mode}): broadcasted_iota along dim 0 of "
          f"(512, 2) cast to vec_size 4: row {r} holds {y[r].tolist()} (expected [{r}, {r}])")
    return
  assert r is None, (f"JAX {version} ({mode}): broadcasted_iota along dim 0 of (512, 2) cast to "
                     f"vec_size 4: row {r} holds {y[r].tolist()} (expected [{r}, {r}])")
  print(f"JAX {version}: every row holds its index: the bug is fixed")


if __name__ == "__main__":
  main()
