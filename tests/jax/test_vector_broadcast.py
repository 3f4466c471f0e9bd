"""vector_store values {"broadcast": {"shape": S, "value": v}} (JAX's `jnp.broadcast_to(v, shape)`
along new leading dims; docs/case-format.md "vector_store") through the Python side: interpret
mode, jax-lower and jax-ir under Lane and Warpgroup; Lane's refusal of a row broadcast added to a
tile of a longer register vector; the repro script; `collfuzz import` (a size-1 dim broadcast
too), and the round trip. With "dims" (lax.broadcast_in_dim along other dims): interpret mode
computes it, the compiler refuses one of a loaded value and lowers one of constants under
Warpgroup; Lane names the operand's layout.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_broadcast.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_broadcast.py'

Expected outputs are computed here with numpy from the inputs, never copied from a run.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import (VECTOR_STORE_KERNEL, check_rejected, executor, import_source,  # noqa: E402
                               round_trip_difference, run_each_mode, store_lines, typed_output)

ROWS, COLS = 4, 256


def broadcast_case(dtype, value, semantics="lane", profile="interpret", shape=(ROWS, COLS)):
  """x: dtype[shape] = arange from -300, loaded into SMEM `tile`; y = value."""
  return {"format": 1, "name": f"broadcast_{dtype}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [{"name": "x", "shape": list(shape), "dtype": dtype,
                      "fill": {"pattern": "arange", "start": -300, "step": 1}}],
          "outputs": [{"name": "y", "shape": list(shape), "dtype": dtype}],
          "program": [{"op": "run_scoped", "allocs": [
              {"name": "tile", "kind": "smem", "shape": list(shape), "dtype": dtype},
              {"name": "bar", "kind": "barrier"}], "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tile"},
               "barrier": {"alloc": "bar"}},
              {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
              {"op": "vector_store", "dst": {"output": "y"}, "value": value}]}]}


def row(r):
  return {"broadcast": {"shape": [COLS], "value": {"load": {"alloc": "tile", "index": [r]}}}}


TILE = {"load": {"alloc": "tile"}}


class RunTest(unittest.TestCase):

  def test_a_row_times_a_constant_under_both_semantics(self):
    case = broadcast_case("int32", {"mul": [row(3), {"const": 3}]})
    x = np.arange(-300, -300 + ROWS * COLS, dtype=np.int32).reshape(ROWS, COLS)
    want = np.broadcast_to(x[3] * 3, (ROWS, COLS))
    run_each_mode(self, case, ("interpret", "lower", "ir"), lambda c, out: (
        np.testing.assert_array_equal(typed_output(out, c["outputs"][0]), want)))

  def test_a_row_plus_the_tile_lowers_under_warpgroup_only(self):
    case = broadcast_case("float16", {"add": [row(1), TILE]}, "warpgroup", "mosaic")
    x = np.arange(-300, -300 + ROWS * COLS).astype(np.float16).reshape(ROWS, COLS)
    out = executor("ir").run(case)
    self.assertEqual(out["kind"], "completed", str(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x[1][None, :] + x)
    # Lane: the row (float16[256], vec_size 2) and the tile (float16[4, 256], vec_size 4).
    check_rejected(self, case, (("lane", "lower"),), "ValueError",
                   "Incompatible FragmentedArray layouts")


  def test_a_row_onto_the_rows_runs_in_interpret_mode_only(self):
    # int32[16, 16]: y = tile + lax.broadcast_in_dim(tile.at[0][...], (16, 16), (0,)), so
    # y[r, c] = x[r, c] + x[0, r]; the compiler refuses it (the 16-element load under Lane, the
    # broadcast's layout under Warpgroup).
    onto_rows = {"broadcast": {"shape": [16], "dims": [0],
                               "value": {"load": {"alloc": "tile", "index": [0]}}}}
    case = broadcast_case("int32", {"add": [TILE, onto_rows]}, shape=(16, 16))
    x = np.arange(-300, -300 + 256, dtype=np.int32).reshape(16, 16)
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", str(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x + x[0][:, None])
    check_rejected(self, case, (("warpgroup", "dialect"),), "ValueError",
                   "Failed to infer a possible set of layouts. This should only happen if "
                   "user-provided layout casts are unsatisfiable. To dump the constraint system "
                   "for debugging, use `MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`.")

  def test_a_constant_column_lowers_under_warpgroup_and_lane_names_its_splat(self):
    column = {"broadcast": {"shape": [ROWS], "dims": [0], "value": {"const": 7}}}
    case = broadcast_case("int32", {"xor": [TILE, column]}, "warpgroup", "mosaic")
    x = np.arange(-300, -300 + ROWS * COLS, dtype=np.int32).reshape(ROWS, COLS)
    out = executor("ir").run(case)
    self.assertEqual(out["kind"], "completed", str(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x ^ 7)
    check_rejected(self, case, (("lane", "lower"),), "NotImplementedError",
                   "Unsupported layout: WGSplatFragLayout(shape=(4,))")


class ReproTest(unittest.TestCase):

  def test_the_store_line(self):
    self.assertEqual(store_lines(broadcast_case("int16", {"add": [row(0), {"const": 1}]})), [
        "y[...] = jnp.broadcast_to(tile.at[0,][...], (4, 256)) + jnp.full((4, 256), 1, "
        "jnp.int16)  # $.program[0].body[2]"])

  def test_the_store_line_of_a_broadcast_along_other_dims(self):
    column = {"broadcast": {"shape": [ROWS], "dims": [0], "value": {"const": 2}}}
    self.assertEqual(store_lines(broadcast_case("int32", {"mul": [TILE, column]})), [
        "y[...] = tile[...] * lax.broadcast_in_dim(jnp.full((4,), 2, jnp.int32), (4, 256), "
        "(0,))  # $.program[0].body[2]"])


# loop_case_support's kernel with an int32[2, 128] input, SMEM buffer and output.
KERNEL = VECTOR_STORE_KERNEL.replace("(128,)", "(2, 128)").replace(
    "jnp.arange(128, dtype=jnp.int32)", "jnp.arange(256, dtype=jnp.int32).reshape(2, 128)")


class ImportTest(unittest.TestCase):

  def test_broadcast_to_and_the_round_trip(self):
    c = import_source(KERNEL % "jnp.broadcast_to(smem.at[1][...], (2, 128)) ^ 5")
    (scope,) = c["program"]
    self.assertEqual(scope["body"][-1]["value"],
                     {"xor": [{"broadcast": {"shape": [128], "value": {
                         "load": {"alloc": "smem", "index": [1]}}}}, {"const": 5}]})
    self.assertIsNone(round_trip_difference(broadcast_case("uint16", {"xor": [row(2), TILE]})))

  def test_a_broadcast_of_a_size_one_dim(self):
    # `row[None, :]` is a new leading dim of 1 (a broadcast along new leading dims), and
    # broadcasting that dim (1 -> 2) one of a size-1 dim before the kept ones.
    c = import_source(KERNEL % "jnp.broadcast_to(smem.at[0][...][None, :], (2, 128))")
    (scope,) = c["program"]
    self.assertEqual(scope["body"][-1]["value"],
                     {"broadcast": {"shape": [1, 128], "value": {"broadcast": {
                         "shape": [128], "value": {"load": {"alloc": "smem", "index": [0]}}}}}})
    x = np.arange(256, dtype=np.int32).reshape(2, 128)
    for mode in ("interpret", "ir"):
      out = executor(mode).run(c)
      self.assertEqual(out["kind"], "completed", str(out)[:2000])
      np.testing.assert_array_equal(typed_output(out, c["outputs"][0]),
                                    np.broadcast_to(x[0], (2, 128)))

  def test_broadcast_in_dim_along_other_dims_and_the_round_trip(self):
    c = import_source(KERNEL % "lax.broadcast_in_dim(jnp.full((2,), 3, jnp.int32), (2, 128), (0,)) "
                      "+ smem[...]")
    (scope,) = c["program"]
    self.assertEqual(scope["body"][-1]["value"],
                     {"add": [{"broadcast": {"shape": [2], "dims": [0], "value": {"const": 3}}},
                              {"load": {"alloc": "smem"}}]})
    onto_rows = {"broadcast": {"shape": [16], "dims": [0],
                               "value": {"load": {"alloc": "tile", "index": [0]}}}}
    self.assertIsNone(round_trip_difference(
        broadcast_case("int32", {"add": [TILE, onto_rows]}, shape=(16, 16))))

  def test_a_broadcast_loaded_scalar_is_refused_as_such(self):
    # jnp.full of a scalar read from a ref: a broadcast of a scalar that is not a constant.
    with self.assertRaises(Exception) as e:
      import_source(VECTOR_STORE_KERNEL % "jnp.full((128,), x_ref[0], jnp.int32)")
    self.assertIn("`broadcast_in_dim` of a scalar that is not a constant", str(e.exception))
    self.assertNotIn("new leading dims", str(e.exception))


if __name__ == "__main__":
  unittest.main()
