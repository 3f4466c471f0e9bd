"""vector_store values {"iota": {"dimension": d, "vec_size": v}} (JAX's
`plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, d), plgpu.Layout.WG_STRIDED(shape,
vec_size=v))`; docs/case-format.md "vector_store") through the Python side: interpret mode
(jax-interpret), the compiler's lowering (jax-lower) and the lowered module evaluated on the CPU
(jax-ir: FragmentedArray.broadcasted_iota's index arithmetic), under Lane and Warpgroup semantics;
the cast's layout refused where 128 * vec_size does not divide the count (both semantics, stage
lower); the repro script; `collfuzz import` of an iota cast right after it, its refusals, and the
round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_iota.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_iota.py'

Expected outputs are numpy's conversions of the indices (integers wrap, floats round to nearest
even), never copied from a run.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import (VECTOR_STORE_KERNEL, executor, import_source,  # noqa: E402
                               check_rejected, round_trip_difference, run_each_mode, store_lines,
                               typed_output)

import cfjax_fill  # noqa: E402


def iota_case(dtype, semantics="lane", profile="interpret"):
  """a: dtype[2, 512] = iota along dim 1 (the column, 0..511: past int8's, uint8's and
  bfloat16's exact range), vec_size left to the case reader's default (the strided layout's);
  b: dtype[512, 2] = iota along dim 0 (the row), vec_size 2 (a vector per row: a longer one
  would cross rows, where JAX computes wrong indices, test_known_bugs.py)."""
  def store(name, dim, vec=None):
    iota = {"dimension": dim, **({"vec_size": vec} if vec else {})}
    return {"op": "vector_store", "dst": {"output": name}, "value": {"iota": iota}}
  return {"format": 1, "name": f"iota_{dtype}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [],
          "outputs": [{"name": "a", "shape": [2, 512], "dtype": dtype},
                      {"name": "b", "shape": [512, 2], "dtype": dtype}],
          "program": [store("a", 1), store("b", 0, 2)]}


def expected(dtype):
  """The indices converted by numpy (ml_dtypes for bfloat16): wrapping, or rounding to nearest
  even once from the exact integer."""
  k = np.arange(512, dtype=np.int64)
  conv = k.astype(cfjax_fill.numpy_dtype(dtype)) if "int" in dtype else \
      k.astype(np.float64).astype(cfjax_fill.numpy_dtype(dtype))
  return np.stack([conv, conv]), np.stack([conv, conv], axis=1)


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir (Lane and Warpgroup) give the indices; jax-lower lowers."""

  def check(self, dtype, modes=("interpret", "ir")):
    want_a, want_b = expected(dtype)

    def both(c, out):
      np.testing.assert_array_equal(typed_output(out, c["outputs"][0], 0), want_a)
      np.testing.assert_array_equal(typed_output(out, c["outputs"][1], 1), want_b)
    with self.subTest(dtype=dtype):
      run_each_mode(self, iota_case(dtype), modes, both)

  def test_int8_wraps(self):
    self.check("int8", ("interpret", "lower", "ir"))

  def test_uint8(self):
    self.check("uint8")

  def test_int32(self):
    self.check("int32")

  def test_bfloat16_rounds_to_even(self):
    self.check("bfloat16", ("interpret", "lower", "ir"))

  def test_float16_and_float32(self):
    self.check("float16")
    self.check("float32")

  def test_a_layout_that_does_not_divide_the_count_is_refused_at_stage_lower(self):
    c = iota_case("int32", profile="mosaic")
    c["outputs"] = [{"name": "a", "shape": [64], "dtype": "int32"}]
    c["program"] = [{"op": "vector_store", "dst": {"output": "a"},
                     "value": {"iota": {"dimension": 0, "vec_size": 1}}}]
    check_rejected(self, c, (("lane", "lower"), ("warpgroup", "lower")), "ValueError",
                   "(WGStridedFragLayout(shape=(64,), vec_size=1), 128)")
    c["target"].update(semantics="lane", profile="interpret")
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, c["outputs"][0]), np.arange(64))


class UncastTest(unittest.TestCase):
  """{"iota": {"dimension": d, "layout_cast": false}}: `lax.broadcasted_iota` with no cast. Lane
  refuses it at stage lower (_iota_lowering has no layout hint); Warpgroup's layout inference lays
  it out as a load: 256 elements lower (jax-ir gives the indices), 64 find no layout (stage
  dialect); interpret mode computes both."""

  def case(self, n, semantics, profile="mosaic"):
    return {"format": 1, "name": "bare_iota", "mesh": {},
            "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
            "inputs": [], "outputs": [{"name": "a", "shape": [2, n], "dtype": "int32"}],
            "program": [{"op": "vector_store", "dst": {"output": "a"},
                         "value": {"iota": {"dimension": 0, "layout_cast": False}}}]}

  def test_lane_refuses_it_and_warpgroup_lowers_a_multiple_of_128(self):
    check_rejected(self, self.case(128, "lane"), (("lane", "lower"),), "RuntimeError",
                   "Failed to infer the output layout of the iota. Please apply "
                   "plgpu.layout_cast to its output right after its creation.")
    want = np.stack([np.zeros(128, np.int32), np.ones(128, np.int32)])
    out = executor("ir").run(self.case(128, "warpgroup"))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, {"dtype": "int32", "shape": [2, 128]}), want)
    out = executor("interpret").run(self.case(128, "lane", "interpret"))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, {"dtype": "int32", "shape": [2, 128]}), want)

  def test_warpgroup_finds_no_layout_for_64_elements(self):
    check_rejected(self, self.case(32, "warpgroup"), (("warpgroup", "dialect"),), "ValueError",
                   "Failed to infer a possible set of layouts. This should only happen if "
                   "user-provided layout casts are unsatisfiable. To dump the constraint system "
                   "for debugging, use `MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`.")

  def test_repro_and_import_keep_it_bare(self):
    self.assertEqual(store_lines(self.case(128, "warpgroup", "interpret")),
                     ["a[...] = lax.broadcasted_iota(jnp.int32, (2, 128), 0)  # $.program[0]"])
    c = import_source(VECTOR_STORE_KERNEL % "smem[...] ^ lax.broadcasted_iota(jnp.int32, (128,), 0)")
    self.assertEqual(c["program"][0]["body"][-1]["value"],
                     {"xor": [{"load": {"alloc": "smem"}},
                              {"iota": {"dimension": 0, "layout_cast": False}}]})
    self.assertIsNone(round_trip_difference(self.case(128, "warpgroup", "interpret")))


class ReproTest(unittest.TestCase):

  def test_the_store_lines(self):
    self.assertEqual(store_lines(iota_case("int16")), [
        "a[...] = plgpu.layout_cast(lax.broadcasted_iota(jnp.int16, (2, 512), 1), "
        "plgpu.Layout.WG_STRIDED((2, 512), vec_size=4))  # $.program[0]",
        "b[...] = plgpu.layout_cast(lax.broadcasted_iota(jnp.int16, (512, 2), 0), "
        "plgpu.Layout.WG_STRIDED((512, 2), vec_size=2))  # $.program[1]"])


class ImportTest(unittest.TestCase):

  def test_an_iota_cast_right_after_it_and_the_round_trip(self):
    c = import_source(VECTOR_STORE_KERNEL % (
        "smem[...] + plgpu.layout_cast(lax.broadcasted_iota(jnp.int32, (128,), 0), "
        "plgpu.Layout.WG_STRIDED((128,), vec_size=1))"))
    (scope,) = c["program"]
    self.assertEqual(scope["body"][-1]["value"],
                     {"add": [{"load": {"alloc": "smem"}},
                              {"iota": {"dimension": 0, "vec_size": 1}}]})
    for dtype, vec in (("bfloat16", 4), ("uint8", 8)):
      c = iota_case(dtype)
      c["program"][0]["value"]["iota"]["vec_size"] = vec  # the default, written by import too
      with self.subTest(dtype=dtype):
        self.assertIsNone(round_trip_difference(c))

  def test_an_iota_cast_to_another_layout_is_refused(self):
    for expr, words in (
        ("plgpu.layout_cast(lax.broadcasted_iota(jnp.int32, (128,), 0), plgpu.Layout.WG_SPLAT)",
         "a vector_store casts an iota to plgpu.Layout.WG_STRIDED"),
        ("smem[...] + plgpu.layout_cast(lax.broadcasted_iota(jnp.int32, (128,), 0), "
         "plgpu.Layout.WG_STRIDED((128,), vec_size=4))", "vec_size 4 (the case language")):
      with self.subTest(expr=expr):
        with self.assertRaises(Exception) as e:
          import_source(VECTOR_STORE_KERNEL % expr)
        self.assertIn(words, str(e.exception))


if __name__ == "__main__":
  unittest.main()
