"""vector_store values {"shift_left"|"shift_right_logical"|"shift_right_arithmetic": [a, b]}
(JAX's lax.shift_left, shift_right_logical, shift_right_arithmetic, `a << k`, `a >> k`;
docs/case-format.md "vector_store") through the Python side: interpret mode (jax-interpret), the
compiler's lowering (jax-lower) and the lowered module evaluated on the CPU (jax-ir: arith.shli/
shrui/shrsi on vectors), under Lane and Warpgroup semantics; the 8-bit refusal (Mosaic GPU's
__lshift__/__rshift__ keep _pointwise's restrict_bitwidth=True); the repro script; `collfuzz
import`, its refusal of a constant amount past the width, and the round trip. Since 2026-12-06 the
amount may be any value of the dtype (LoadedAmountTest): past the width interpret mode gives XLA's
rule and jax-ir names LLVM's poison.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_shift.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_shift.py'

Expected outputs are computed here with Python integers from the inputs, never copied from a run.
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
                               check_rejected, check_runs_to, store_lines, typed_output)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402

DTYPES = ("int16", "uint16", "int32", "uint32")
N = 512
MSG_8BIT = ("Pointwise operations on 8-bit types are unsupported (except bitwise operations). "
            "Upcast to a 16- or 32-bit type before performing the operation.")


def width(dtype):
  return 8 * np.dtype(dtype).itemsize


def amounts(dtype):
  """Three amounts: 1, the middle of the width, and the width less one."""
  w = width(dtype)
  return 1, w // 2 + 1, w - 1


def shift_case(dtype, semantics="lane", profile="interpret"):
  """x: dtype[N] from the whole range; o[0] = x << a, o[1] = x >>> b (logical), o[2] = x >> c
  (arithmetic), o[3] = shift_right_arithmetic(x << b, b) (the low bits sign-extended)."""
  info = np.iinfo(np.dtype(dtype))
  rng = np.random.default_rng(DTYPES.index(dtype))
  xs = [int(v) for v in rng.integers(int(info.min), int(info.max), N, endpoint=True)]
  xs[:3] = [int(info.min), int(info.max), -1 if info.min < 0 else int(info.max) // 2 + 1]
  a, b, c = amounts(dtype)
  lx = {"load": {"input": "x"}}

  def store(k, value):
    return {"op": "vector_store", "dst": {"output": "o", "index": [k]}, "value": value}
  return {"format": 1, "name": f"shift_{dtype}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [{"name": "x", "shape": [N], "dtype": dtype,
                      "fill": {"pattern": "values", "values": xs}}],
          "outputs": [{"name": "o", "shape": [4, N], "dtype": dtype}],
          "program": [store(0, {"shift_left": [lx, {"const": a}]}),
                      store(1, {"shift_right_logical": [lx, {"const": b}]}),
                      store(2, {"shift_right_arithmetic": [lx, {"const": c}]}),
                      store(3, {"shift_right_arithmetic": [
                          {"shift_left": [lx, {"const": b}]}, {"const": b}]})]}


def expected(case):
  """Each element with Python's unbounded integers on the bits, not numpy's shifts."""
  dtype = case["inputs"][0]["dtype"]
  w, (a, b, c) = width(dtype), amounts(dtype)
  mask = (1 << w) - 1
  x = np.asarray(cfjax_fill.fill_array(case["inputs"][0]))

  def signed(u):
    return u - (1 << w) if u >> (w - 1) else u
  rows = [[], [], [], []]
  for v in x.tolist():
    u = v & mask
    rows[0].append((u << a) & mask)
    rows[1].append(u >> b)
    rows[2].append((signed(u) >> c) & mask)
    rows[3].append((signed((u << b) & mask) >> b) & mask)
  unsigned = np.array(rows, np.dtype(f"u{w // 8}"))
  return unsigned.view(np.dtype(dtype))


out_array = typed_output


class CaseFunctionsTest(unittest.TestCase):

  def test_numpy_functions_are_the_bits(self):
    for dtype in DTYPES:
      case = shift_case(dtype)
      x = np.asarray(cfjax_fill.fill_array(case["inputs"][0]))
      a, b, c = (np.full(x.shape, k, x.dtype) for k in amounts(dtype))
      got = np.stack([cfjax_case.VECTOR_BINARY["shift_left"](x, a),
                      cfjax_case.VECTOR_BINARY["shift_right_logical"](x, b),
                      cfjax_case.VECTOR_BINARY["shift_right_arithmetic"](x, c),
                      cfjax_case.VECTOR_BINARY["shift_right_arithmetic"](
                          cfjax_case.VECTOR_BINARY["shift_left"](x, b), b)])
      with self.subTest(dtype=dtype):
        self.assertEqual(got.dtype, x.dtype)
        np.testing.assert_array_equal(got, expected(case))


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir (Lane and Warpgroup) give the bits; jax-lower lowers."""

  def check(self, dtype, modes=("interpret", "ir")):
    case = shift_case(dtype)
    check_runs_to(self, case, expected(case), modes)

  def test_int16_lowers_and_runs(self):
    self.check("int16", ("interpret", "lower", "ir"))

  def test_uint16(self):
    self.check("uint16")

  def test_int32(self):
    self.check("int32", ("interpret", "lower", "ir"))

  def test_uint32(self):
    self.check("uint32")

  def test_an_eight_bit_shift_is_refused_and_interpret_mode_computes_it(self):
    c = shift_case("int16", "lane", "mosaic")
    c["inputs"][0]["dtype"] = c["outputs"][0]["dtype"] = "int8"
    c["inputs"][0]["fill"] = {"pattern": "arange", "step": 1, "start": -128}
    c["outputs"][0]["shape"] = [1, N]
    c["program"] = [{"op": "vector_store", "dst": {"output": "o", "index": [0]},
                     "value": {"shift_left": [{"load": {"input": "x"}}, {"const": 3}]}}]
    check_rejected(self, c, (("lane", "lower"), ("warpgroup", "dialect")), "NotImplementedError",
                   MSG_8BIT)
    c["target"]["profile"] = "interpret"
    c["target"]["semantics"] = "lane"
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    x = np.arange(-128, -128 + N).astype(np.int8)
    np.testing.assert_array_equal(out_array(out, c["outputs"][0])[0], (x.astype(np.uint8) << 3)
                                  .astype(np.uint8).view(np.int8))


def loaded_amount_case(dtype, semantics="lane", mask=None):
  """x: dtype[N] from the whole range (shift_case's); o[0] = x >> (x & mask) (arithmetic): each
  element by its own amount, all below the width when mask is the width less one (the default);
  o[1..3] = x << (x & mask), x >>> (x & mask), x << x."""
  case = shift_case(dtype, semantics)
  m = width(dtype) - 1 if mask is None else mask
  lx = {"load": {"input": "x"}}
  amount = {"and": [lx, {"const": m}]}

  def store(k, value):
    return {"op": "vector_store", "dst": {"output": "o", "index": [k]}, "value": value}
  case["program"] = [store(0, {"shift_right_arithmetic": [lx, amount]}),
                     store(1, {"shift_left": [lx, amount]}),
                     store(2, {"shift_right_logical": [lx, amount]}),
                     store(3, {"shift_left": [lx, lx]})]
  return case


def loaded_amount_expected(case, mask=None):
  """loaded_amount_case's rows with Python integers, XLA's rule past the width (interpret mode)."""
  dtype = case["inputs"][0]["dtype"]
  w = width(dtype)
  m = w - 1 if mask is None else mask
  full = (1 << w) - 1
  x = np.asarray(cfjax_fill.fill_array(case["inputs"][0]))

  def signed(u):
    return u - (1 << w) if u >> (w - 1) else u

  def shl(u, k):
    return (u << k) & full if k < w else 0
  rows = [[], [], [], []]
  for v in x.tolist():
    u = v & full
    k = u & m
    rows[0].append((signed(u) >> min(k, w - 1)) & full)
    rows[1].append(shl(u, k))
    rows[2].append(u >> k if k < w else 0)
    rows[3].append(shl(u, u))
  return np.array(rows, np.dtype(f"u{w // 8}")).view(np.dtype(dtype))


class LoadedAmountTest(unittest.TestCase):
  """A shift by a loaded amount: each element by its own. Interpret mode gives XLA's rule past
  the width; jax-ir, which evaluates the compiler's module, the bits below it and "unavailable
  (poison)" past it (LLVM's shift there is poison); jax-lower lowers it."""

  def test_amounts_below_the_width_run_to_the_bits_on_every_mode(self):
    for dtype in ("int16", "uint32"):  # under Lane and Warpgroup (run_each_mode)
      case = loaded_amount_case(dtype)
      case["program"] = case["program"][:3]
      case["outputs"][0]["shape"] = [3, N]
      check_runs_to(self, case, loaded_amount_expected(case)[:3], ("interpret", "lower", "ir"))

  def test_past_the_width_interpret_mode_shifts_every_bit_out_and_jax_ir_names_the_poison(self):
    case = loaded_amount_case("int32", "lane", mask=63)
    check_runs_to(self, case, loaded_amount_expected(case, mask=63), ("interpret",))
    out = executor("ir").run(case)
    self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
    self.assertIn("poison", out["reason"])


class ReproTest(unittest.TestCase):

  def test_the_store_lines(self):
    lines = store_lines(shift_case("int16"))
    full = "jnp.full((512,), {}, jnp.int16)"
    self.assertEqual(lines, [
        f"o.at[0,][...] = lax.shift_left(x[...], {full.format(1)})  # $.program[0]",
        f"o.at[1,][...] = lax.shift_right_logical(x[...], {full.format(9)})  # $.program[1]",
        f"o.at[2,][...] = lax.shift_right_arithmetic(x[...], {full.format(15)})  # $.program[2]",
        f"o.at[3,][...] = lax.shift_right_arithmetic(lax.shift_left(x[...], {full.format(9)}), "
        f"{full.format(9)})  # $.program[3]"])


class ImportTest(unittest.TestCase):

  def test_each_shift_and_the_round_trip(self):
    c = import_source(VECTOR_STORE_KERNEL % "(smem[...] << 3) ^ (x_ref[...] >> 2) ^ "
                      "lax.shift_right_logical(smem[...], 31)")
    (scope,) = c["program"]
    sm, x = {"load": {"alloc": "smem"}}, {"load": {"input": c["inputs"][0]["name"]}}
    self.assertEqual(scope["body"][-1]["value"],
                     {"xor": [{"xor": [{"shift_left": [sm, {"const": 3}]},
                                       {"shift_right_arithmetic": [x, {"const": 2}]}]},
                              {"shift_right_logical": [sm, {"const": 31}]}]})
    self.assertIsNone(round_trip_difference(shift_case("uint32")))

  def test_a_constant_amount_past_the_width_is_refused(self):
    with self.assertRaises(Exception) as e:
      import_source(VECTOR_STORE_KERNEL % "smem[...] << 32")
    self.assertIn("`shift_left` by {\"const\": 32}", str(e.exception))
    self.assertIn("a vector_store shifts by a constant from 0 to the width of int32 less one",
                  str(e.exception))

  def test_a_loaded_amount_and_the_round_trip(self):
    c = import_source(VECTOR_STORE_KERNEL % "smem[...] >> (x_ref[...] & 31)")
    (scope,) = c["program"]
    sm, x = {"load": {"alloc": "smem"}}, {"load": {"input": c["inputs"][0]["name"]}}
    self.assertEqual(scope["body"][-1]["value"],
                     {"shift_right_arithmetic": [sm, {"and": [x, {"const": 31}]}]})
    self.assertIsNone(round_trip_difference(loaded_amount_case("uint16")))


if __name__ == "__main__":
  unittest.main()
