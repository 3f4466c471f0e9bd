"""The fills `collfuzz import` infers (harness/jax/cfjax_import_kernel.infer_fill) hold exactly what
the kernel was called with, and the repro script's make_inputs() builds the same arrays
(cfjax_repro_kernel.input_src).

    .venv-jax/bin/python -m unittest discover -s tests/jax
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

import cfjax_fill  # noqa: E402
import cfjax_import_kernel  # noqa: E402
import cfjax_repro_kernel  # noqa: E402


def arr(values, dtype):
  return np.asarray(values, dtype=np.float64 if dtype in ("bfloat16", "float8_e4m3fn") else None) \
      .astype(cfjax_fill.numpy_dtype(dtype))


class InferFillTest(unittest.TestCase):

  def assert_holds(self, a, dtype, pattern):
    fill, why = cfjax_import_kernel.infer_fill(a, dtype)
    self.assertIsNotNone(fill, why)
    self.assertEqual(fill["pattern"], pattern, fill)
    got = cfjax_fill.fill_array({"shape": list(a.shape), "dtype": dtype, "fill": fill})
    self.assertEqual(cfjax_fill.pack(got, dtype), cfjax_fill.pack(a, dtype))
    return fill

  def test_recipes(self):
    self.assertEqual(self.assert_holds(np.arange(128, dtype=np.float32), "float32", "arange"),
                     {"pattern": "arange", "start": 0, "step": 1})
    self.assert_holds(np.arange(1, 129, dtype=np.float32), "float32", "iota")
    f = self.assert_holds((np.arange(24, dtype=np.int16) * -7 + 100).reshape(2, 3, 4), "int16",
                          "arange")
    self.assertEqual((f["start"], f["step"]), (100, -7))
    self.assertEqual(self.assert_holds(np.full((3, 5), -2, np.int8), "int8", "constant"),
                     {"pattern": "constant", "value": -2})
    self.assert_holds(np.full((1,), 5, np.uint8), "uint8", "constant")

  def test_everything_else_is_values(self):
    rng = np.random.default_rng(0)
    self.assert_holds(rng.standard_normal((16, 8)).astype(np.float32), "float32", "values")
    self.assert_holds(arr(rng.standard_normal(40), "bfloat16"), "bfloat16", "values")
    self.assert_holds(arr([-0.0, 0.0], "float32"), "float32", "values")  # not the constant 0
    self.assert_holds(np.arange(4096, dtype=np.float32), "float32", "values")  # past 2047
    self.assert_holds(np.array([2 ** 63 - 1, -2 ** 63], np.int64), "int64", "values")
    self.assert_holds(np.array([2 ** 64 - 1, 3], np.uint64), "uint64", "values")
    self.assert_holds(arr([448, -0.5, 0.001953125], "float8_e4m3fn"), "float8_e4m3fn", "values")
    self.assert_holds(np.array([-8, 7, 0], cfjax_fill.numpy_dtype("int4")), "int4", "values")

  def test_what_stays_iota_says_why(self):
    fill, why = cfjax_import_kernel.infer_fill(np.array([1.0, np.nan], np.float32), "float32")
    self.assertIsNone(fill)
    self.assertIn("NaN", why)
    big = np.random.default_rng(1).random(cfjax_fill.MAX_FILL_VALUES + 1).astype(np.float32)
    fill, why = cfjax_import_kernel.infer_fill(big, "float32")
    self.assertIsNone(fill)
    self.assertIn("65536", why)
    # a recipe of any size is still a recipe
    self.assert_holds(np.zeros(cfjax_fill.MAX_FILL_VALUES + 1, np.float32), "float32", "constant")


class ReproInputsTest(unittest.TestCase):
  """make_inputs()'s expression for each fill builds cfjax_fill's array."""

  def test_script_inputs_equal_the_fills(self):
    import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
    ns = {"np": np, "jnp": jnp}
    exec(cfjax_repro_kernel.HELPERS, ns)  # pylint: disable=exec-used
    specs = [
        {"shape": [2, 64], "dtype": "float32", "fill": {"pattern": "arange", "start": 0, "step": 1}},
        {"shape": [16], "dtype": "uint8", "fill": {"pattern": "arange", "start": 200, "step": -9}},
        {"shape": [4, 4], "dtype": "int4", "fill": {"pattern": "arange", "start": -8, "step": 0}},
        {"shape": [1], "dtype": "bfloat16", "fill": {"pattern": "arange", "start": -3, "step": 5}},
        {"shape": [3], "dtype": "bfloat16", "fill": {"pattern": "values",
                                                     "values": [0.5, -0.0, 3.03125]}},
        {"shape": [2, 2], "dtype": "int8", "fill": {"pattern": "values", "values": [-128, 0, 5, 127]}},
        {"shape": [40], "dtype": "float32", "fill": {"pattern": "values",
                                                   "values": [i / 64 - 0.3125 for i in range(40)]}},
        {"shape": [5], "dtype": "int32", "fill": {"pattern": "random", "seed": 3}},
    ]
    for spec in specs:
      src = cfjax_repro_kernel.input_src(dict(spec, name="x"))
      if spec["fill"]["pattern"] == "arange" and spec["shape"] != [1] and spec["fill"]["step"]:
        self.assertIn("jnp.arange(", src)
      got = np.asarray(eval(src, ns))  # pylint: disable=eval-used
      want = cfjax_fill.fill_array(spec)
      self.assertEqual(got.dtype, want.dtype, src)
      self.assertEqual(cfjax_fill.pack(got, spec["dtype"]), cfjax_fill.pack(want, spec["dtype"]),
                       src[:200])


if __name__ == "__main__":
  unittest.main()
