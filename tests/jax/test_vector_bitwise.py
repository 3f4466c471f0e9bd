"""vector_store values {"and"|"or"|"xor": [a, b]} (JAX's a & b, a | b, a ^ b: lax.and_p, or_p,
xor_p; docs/case-format.md "vector_store") through the Python side: interpret mode
(jax-interpret), the compiler's lowering (jax-lower) and the lowered module evaluated on the CPU
(jax-ir: arith.andi/ori/xori on vectors), under Lane and Warpgroup semantics, 8-bit integers
included (Mosaic GPU allows bitwise ops on them: FragmentedArray._pointwise(restrict_bitwidth=
False)) while an add under them is still refused; the repro script; `collfuzz import` and the
round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_bitwise.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_bitwise.py'

Expected outputs are computed here with numpy from the inputs, never copied from a run.
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

from loop_case_support import (VECTOR_STORE_KERNEL, executor, import_source, round_trip_difference,  # noqa: E402
                               check_rejected, check_runs_to, store_lines)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402

DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32")
N = 512
MSG_8BIT = ("Pointwise operations on 8-bit types are unsupported (except bitwise operations). "
            "Upcast to a 16- or 32-bit type before performing the operation.")


def operands(dtype, n=N):
  info = np.iinfo(np.dtype(dtype))
  rng = np.random.default_rng(DTYPES.index(dtype))
  x = rng.integers(int(info.min), int(info.max), n, endpoint=True)
  y = rng.integers(int(info.min), int(info.max), n, endpoint=True)
  x[:2], y[:2] = [info.min, info.max], [info.max, info.min]
  return [int(v) for v in x], [int(v) for v in y]


def bitwise_case(dtype, semantics="lane", profile="interpret"):
  """x, y: dtype[N]; o[0] = x & y, o[1] = x | y, o[2] = (x ^ y) ^ 5."""
  xs, ys = operands(dtype)
  lx, ly = {"load": {"input": "x"}}, {"load": {"input": "y"}}

  def store(k, value):
    return {"op": "vector_store", "dst": {"output": "o", "index": [k]}, "value": value}
  return {"format": 1, "name": f"bitwise_{dtype}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [{"name": "x", "shape": [N], "dtype": dtype,
                      "fill": {"pattern": "values", "values": xs}},
                     {"name": "y", "shape": [N], "dtype": dtype,
                      "fill": {"pattern": "values", "values": ys}}],
          "outputs": [{"name": "o", "shape": [3, N], "dtype": dtype}],
          "program": [store(0, {"and": [lx, ly]}), store(1, {"or": [lx, ly]}),
                      store(2, {"xor": [{"xor": [lx, ly]}, {"const": 5}]})]}


def expected(case):
  x, y = (np.asarray(cfjax_fill.fill_array(s)) for s in case["inputs"])
  return np.stack([x & y, x | y, (x ^ y) ^ x.dtype.type(5)])


class CaseFunctionsTest(unittest.TestCase):

  def test_numpy_in_the_dtype(self):
    a = np.array([-1, 0x0F, 6], np.int8)
    b = np.array([0x70, 0x3C, 3], np.int8)
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["and"](a, b), a & b)
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["or"](a, b), a | b)
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["xor"](a, b), a ^ b)
    self.assertEqual(cfjax_case.VECTOR_BINARY["xor"](a, b).dtype, np.int8)


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir (Lane and Warpgroup) give numpy's bits; jax-lower lowers."""

  def check(self, dtype, modes=("interpret", "ir")):
    case = bitwise_case(dtype)
    check_runs_to(self, case, expected(case), modes)

  def test_int8_lowers_and_runs(self):
    self.check("int8", ("interpret", "lower", "ir"))

  def test_uint8(self):
    self.check("uint8")

  def test_int16(self):
    self.check("int16")

  def test_uint16(self):
    self.check("uint16", ("interpret", "lower", "ir"))

  def test_int32(self):
    self.check("int32")

  def test_uint32(self):
    self.check("uint32")

  def test_an_add_under_a_xor_is_refused_on_eight_bits(self):
    c = bitwise_case("uint8", "lane", "mosaic")
    c["program"] = [{"op": "vector_store", "dst": {"output": "o", "index": [0]},
                     "value": {"xor": [{"add": [{"load": {"input": "x"}}, {"const": 1}]},
                                       {"const": 7}]}}]
    check_rejected(self, c, (("lane", "lower"), ("warpgroup", "dialect")), "NotImplementedError",
                   MSG_8BIT)


class ReproTest(unittest.TestCase):

  def test_the_store_lines(self):
    self.assertEqual(store_lines(bitwise_case("int16")), [
        "o.at[0,][...] = x[...] & y[...]  # $.program[0]",
        "o.at[1,][...] = x[...] | y[...]  # $.program[1]",
        "o.at[2,][...] = (x[...] ^ y[...]) ^ jnp.full((512,), 5, jnp.int16)  # $.program[2]"])


class ImportTest(unittest.TestCase):

  def test_each_op_and_the_round_trip(self):
    c = import_source(VECTOR_STORE_KERNEL % "(smem[...] ^ 3) | (x_ref[...] & smem[...])")
    (scope,) = c["program"]
    sm, x = {"load": {"alloc": "smem"}}, {"load": {"input": c["inputs"][0]["name"]}}
    self.assertEqual(scope["body"][-1]["value"],
                     {"or": [{"xor": [sm, {"const": 3}]}, {"and": [x, sm]}]})
    self.assertIsNone(round_trip_difference(bitwise_case("uint32")))


if __name__ == "__main__":
  unittest.main()
