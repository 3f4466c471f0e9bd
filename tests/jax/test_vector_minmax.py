"""vector_store values {"min": [a, b]} and {"max": [a, b]} (jnp.minimum / jnp.maximum, lax.min_p /
lax.max_p; docs/case-format.md "vector_store") through the Python side: the translation run in
interpret mode (jax-interpret), the compiler's lowering (jax-lower) and the lowered module
evaluated on the CPU (jax-ir: arith.maxsi/maxui/minsi/minui on vectors for 32-bit integers, the
inline PTX `max.NaN.f32`, `max.NaN.f16(x2)`, `max.NaN.bf16(x2)`, `max.s16(x2)`, `max.u16(x2)`
and their `min`s with the vector element moves around them), under Lane and Warpgroup semantics;
the 8-bit refusal; the repro script (cfjax_repro_body); `collfuzz import` (cfjax_import_vectors)
and the round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_minmax.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_minmax.py'

Expected outputs are computed here with numpy from the inputs' fills, never copied from a run.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from loop_case_support import (VECTOR_STORE_KERNEL, executor, import_source,  # noqa: E402
                               round_trip_difference, run_each_mode, run_script)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_ir_ops_vector  # noqa: E402
import cfjax_repro  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16", "int16", "uint16", "int32", "uint32")
N = 1024  # per lane: 8 elements (4 of 32-bit types); 16-bit PTX on packed pairs, sliced
M = 128   # per lane: 1 element (16-bit PTX on one element: `max.NaN.f16`, `max.s16`, ...)
MSG_8BIT = ("Pointwise operations on 8-bit types are unsupported (except bitwise operations). "
            "Upcast to a 16- or 32-bit type before performing the operation.")


def operands(dtype, n=N, seed=0):
  """Two lists of n numbers of `dtype` (exactly its values): signed ones with negatives, unsigned
  ones past the signed range (a comparison of the wrong signedness picks the other), floats of
  both signs with no subnormal and no pair of zeros (those results are not compared); every
  eighth pair equal."""
  rng = np.random.default_rng(seed + DTYPES.index(dtype) if dtype in DTYPES else seed)
  if dtype.startswith(("int", "uint")):
    info = np.iinfo(np.dtype(dtype))
    x = rng.integers(int(info.min), int(info.max), n, endpoint=True)
    y = rng.integers(int(info.min), int(info.max), n, endpoint=True)
    x[:4] = [info.min, info.max, info.max, 0]
    y[:4] = [info.max, info.min, (int(info.max) + 1) // 2 - 1, (int(info.max) + 1) // 2]
  else:
    np_dt = cfjax_fill.numpy_dtype(dtype)
    tiny = float(ml_dtypes.finfo(np_dt).smallest_normal)

    def draw():
      v = (rng.standard_normal(n) * 100).astype(np_dt).astype(np.float64)
      v[np.abs(v) < tiny] = 1.0  # no subnormal (nor zero) operand
      return v
    x, y = draw(), draw()
    x[:4] = [0.0, -0.0, 3.0, -2.5]
    y[:4] = [-1.5, 2.0, -0.0, 0.0]
  y[::8] = x[::8]
  if dtype.startswith(("int", "uint")):
    return [int(v) for v in x], [int(v) for v in y]
  return [float(v) for v in x], [float(v) for v in y]


def store(dst, index, kind, a, b):
  return {"op": "vector_store", "dst": {"output": dst, "index": index}, "value": {kind: [a, b]}}


def minmax_case(dtype, semantics="lane", profile="interpret"):
  """x, y: dtype[N]; o[0] = max(x, y), o[1] = min(x, y) (N elements: 8 or 4 per lane);
  p[0] = max(x[:128], y[:128]), p[1] = min(...) (one element per lane)."""
  xs, ys = operands(dtype)
  x = {"name": "x", "shape": [N], "dtype": dtype, "fill": {"pattern": "values", "values": xs}}
  y = {"name": "y", "shape": [N], "dtype": dtype, "fill": {"pattern": "values", "values": ys}}
  lx, ly = {"load": {"input": "x"}}, {"load": {"input": "y"}}
  head = [{"start": 0, "size": M}]
  hx, hy = {"load": {"input": "x", "index": head}}, {"load": {"input": "y", "index": head}}
  return {"format": 1, "name": f"minmax_{dtype}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [x, y],
          "outputs": [{"name": "o", "shape": [2, N], "dtype": dtype},
                      {"name": "p", "shape": [2, M], "dtype": dtype}],
          "program": [store("o", [0], "max", lx, ly), store("o", [1], "min", lx, ly),
                      store("p", [0], "max", hx, hy), store("p", [1], "min", hx, hy)]}


def expected(case):
  """numpy's maximum/minimum of the inputs in the dtype: (o, p)."""
  x, y = (np.asarray(cfjax_fill.fill_array(s)) for s in case["inputs"])
  o = np.stack([np.maximum(x, y), np.minimum(x, y)])
  p = np.stack([np.maximum(x[:M], y[:M]), np.minimum(x[:M], y[:M])])
  return o, p


def out_array(out, spec, k):
  o = out["outputs"][k]
  a = np.frombuffer(bytes.fromhex(o["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def bits(a):
  a = np.asarray(a)
  return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


class SemanticsTest(unittest.TestCase):
  """What the evaluator's PTX min/max does on an element's bits, and cfjax_case's numpy side."""

  def f32(self, v):
    return int(np.array(v, np.float32).view(np.uint32))

  def f16(self, v, dt=np.float16):
    return int(np.array(v, dt).view(np.uint16))

  def test_floats(self):
    mm = cfjax_ir_ops_vector.min_max_bits
    self.assertEqual(mm(True, "f32", self.f32(-3.5), self.f32(2.0)), self.f32(2.0))
    self.assertEqual(mm(False, "f32", self.f32(-3.5), self.f32(2.0)), self.f32(-3.5))
    nan = self.f32(float("nan")) | 5  # a payload: the result is the canonical NaN
    self.assertEqual(mm(True, "f32", nan, self.f32(1.0)), 0x7FFFFFFF)
    self.assertEqual(mm(False, "f32", self.f32(1.0), nan), 0x7FFFFFFF)
    sub = 1  # the least f32 subnormal, kept (no .ftz)
    self.assertEqual(mm(True, "f32", sub, self.f32(0.0)), sub)
    self.assertEqual(mm(True, "f32", self.f32(-0.0), self.f32(0.0)), self.f32(0.0))
    self.assertEqual(mm(False, "f32", self.f32(0.0), self.f32(-0.0)), self.f32(-0.0))
    for ty, dt in (("f16", np.float16), ("bf16", ml_dtypes.bfloat16)):
      a, b = self.f16(-1.0, dt), self.f16(0.5, dt)
      self.assertEqual(mm(True, ty, a, b), b)
      self.assertEqual(mm(False, ty, a, b), a)
      self.assertEqual(mm(True, ty, 0x7FC1, b), 0x7FFF)
      # packed: element 0 in the low half
      self.assertEqual(mm(True, ty + "x2", a | (b << 16), b | (a << 16)), b | (b << 16))
      self.assertEqual(mm(False, ty + "x2", a | (b << 16), b | (a << 16)), a | (a << 16))

  def test_integers(self):
    mm = cfjax_ir_ops_vector.min_max_bits
    self.assertEqual(mm(True, "s16", 0xFFFF, 1), 1)  # -1 < 1
    self.assertEqual(mm(True, "u16", 0xFFFF, 1), 0xFFFF)
    self.assertEqual(mm(False, "s16x2", 0xFFFF0001, 0x00018000), 0xFFFF8000)
    self.assertEqual(mm(False, "u16x2", 0xFFFF0001, 0x00018000), 0x00010001)

  def test_case_functions_are_numpy_in_the_dtype(self):
    a = np.array([-3, 70, 5], np.int16)
    b = np.array([2, -9, 5], np.int16)
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["max"](a, b), [2, 70, 5])
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["min"](a, b), [-3, -9, 5])
    u = np.array([2 ** 31 + 1, 3], np.uint32)
    v = np.array([4, 2 ** 32 - 1], np.uint32)
    np.testing.assert_array_equal(cfjax_case.VECTOR_BINARY["max"](u, v), [2 ** 31 + 1, 2 ** 32 - 1])
    self.assertEqual(cfjax_case.VECTOR_BINARY["max"](u, v).dtype, np.uint32)
    c = cfjax_case.Case.from_json(minmax_case("int32"))
    self.assertEqual(cfjax_case.written_ranges(c), {"o": [[0, 2 * N]], "p": [[0, 2 * M]]})


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir (Lane and Warpgroup) give numpy's values; jax-lower lowers."""

  def check(self, dtype, modes=("interpret", "ir")):
    case = minmax_case(dtype)
    want = expected(case)
    self.assertTrue(np.any(want[0][0] != want[0][1]))  # max and min differ somewhere

    def check_completed(c, out):
      for k, w in enumerate(want):
        got = out_array(out, c["outputs"][k], k)
        # bit for bit: no NaN, no subnormal, no +0/-0 pair among the operands
        np.testing.assert_array_equal(bits(got), bits(w), err_msg=f"output {k}")

    with self.subTest(dtype=dtype):
      run_each_mode(self, case, modes, check_completed)

  def test_float32(self):
    self.check("float32", ("interpret", "lower", "ir"))

  def test_float16(self):
    self.check("float16")

  def test_bfloat16(self):
    self.check("bfloat16")

  def test_int16_signed(self):
    self.check("int16", ("interpret", "lower", "ir"))

  def test_uint16(self):
    self.check("uint16")

  def test_int32(self):
    self.check("int32")

  def test_uint32_above_2_31(self):
    xs, ys = operands("uint32")
    self.assertTrue(any(v >= 2 ** 31 for v in xs) and any(v < 2 ** 31 for v in ys))
    self.check("uint32")

  def test_nested_with_arithmetic(self):
    """o = max(x - 100, 0) * 2 and min(x, c) with a constant (int32, Lane and Warpgroup)."""
    xs, _ = operands("int32", 256)
    xs = [v // 4 for v in xs]  # the doubling does not wrap
    x = {"name": "x", "shape": [256], "dtype": "int32", "fill": {"pattern": "values", "values": xs}}
    lx = {"load": {"input": "x"}}
    case = {"format": 1, "name": "nested", "mesh": {},
            "target": {"arch": "sm_90a", "semantics": "lane", "profile": "interpret"},
            "inputs": [x], "outputs": [{"name": "o", "shape": [2, 256], "dtype": "int32"}],
            "program": [
                {"op": "vector_store", "dst": {"output": "o", "index": [0]},
                 "value": {"mul": [{"max": [{"sub": [lx, {"const": 100}]}, {"const": 0}]},
                                   {"const": 2}]}},
                {"op": "vector_store", "dst": {"output": "o", "index": [1]},
                 "value": {"min": [{"const": -7}, lx]}}]}
    a = np.asarray(xs, np.int32)
    want = np.stack([np.maximum(a - 100, 0) * 2, np.minimum(np.int32(-7), a)])
    self.assertTrue(np.any(want[0] == 0) and np.any(want[0] > 0))
    for mode, sem in (("interpret", "lane"), ("ir", "lane"), ("ir", "warpgroup")):
      c = json.loads(json.dumps(case))
      c["target"]["semantics"] = sem
      if mode == "ir":
        c["target"]["profile"] = "mosaic"
      out = executor(mode).run(c)
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
        np.testing.assert_array_equal(out_array(out, c["outputs"][0], 0), want)


class EightBitTest(unittest.TestCase):
  """min/max on int8/uint8: the compiler's NotImplementedError, as add/sub/mul (Lane: at stage
  lower; Warpgroup: dialect), in jax-lower and jax-ir alike; interpret mode computes them."""

  def case(self, dtype, kind):
    xs = [(-1) ** k * (k % 100) for k in range(128)] if dtype == "int8" else \
        [(k * 37) % 256 for k in range(128)]
    x = {"name": "x", "shape": [128], "dtype": dtype, "fill": {"pattern": "values", "values": xs}}
    c = {"format": 1, "name": f"{kind}_{dtype}", "mesh": {},
         "target": {"arch": "sm_90a", "semantics": "lane", "profile": "interpret"},
         "inputs": [x], "outputs": [{"name": "o", "shape": [128], "dtype": dtype}],
         "program": [{"op": "vector_store", "dst": {"output": "o"},
                      "value": {kind: [{"load": {"input": "x"}}, {"const": 3}]}}]}
    return c, np.asarray(xs, np.dtype(dtype))

  def test_lowering_refuses(self):
    for dtype in ("int8", "uint8"):
      for kind in ("min", "max"):
        for mode in ("lower", "ir"):
          for sem, stage in (("lane", "lower"), ("warpgroup", "dialect")):
            c, _ = self.case(dtype, kind)
            c["target"].update(semantics=sem, profile="mosaic")
            out = executor(mode).run(c)
            with self.subTest(dtype=dtype, kind=kind, mode=mode, semantics=sem):
              self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
              d = out["diagnostic"]
              self.assertEqual((d["stage"], d["exception"], d["message"]),
                               (stage, "NotImplementedError", MSG_8BIT))

  def test_interpret_mode_computes(self):
    for dtype in ("int8", "uint8"):
      for kind, f in (("min", np.minimum), ("max", np.maximum)):
        c, x = self.case(dtype, kind)
        out = executor("interpret").run(c)
        with self.subTest(dtype=dtype, kind=kind):
          self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
          np.testing.assert_array_equal(out_array(out, c["outputs"][0], 0),
                                        f(x, np.dtype(dtype).type(3)))


class ReproTest(unittest.TestCase):

  def generate(self, case, expected_out=None):
    return cfjax_repro.generate({
        "case": case, "mode": "interpret",
        "expected": expected_out or {"kind": "completed", "outputs": []}, "match": "exact",
        "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})

  def test_the_store_lines(self):
    src = self.generate(minmax_case("int16"))
    lines = [ln.strip() for ln in src.splitlines() if "[...] =" in ln]
    ds = "pl.ds(0, 128)"
    self.assertEqual(lines, [
        "o.at[0,][...] = jnp.maximum(x[...], y[...])  # $.program[0]",
        "o.at[1,][...] = jnp.minimum(x[...], y[...])  # $.program[1]",
        f"p.at[0,][...] = jnp.maximum(x.at[{ds},][...], y.at[{ds},][...])  # $.program[2]",
        f"p.at[1,][...] = jnp.minimum(x.at[{ds},][...], y.at[{ds},][...])  # $.program[3]"])
    nested = {"mul": [{"max": [{"sub": [{"load": {"input": "x"}}, {"const": 1}]},
                               {"const": 0}]}, {"const": 2}]}
    c = minmax_case("int32")
    c["program"] = [{"op": "vector_store", "dst": {"output": "o", "index": [0]}, "value": nested}]
    self.assertIn("o.at[0,][...] = jnp.maximum(x[...] - jnp.full((1024,), 1, jnp.int32), "
                  "jnp.full((1024,), 0, jnp.int32)) * jnp.full((1024,), 2, jnp.int32)  "
                  "# $.program[0]", self.generate(c))

  def test_script_runs_and_asserts_the_outputs(self):
    c = minmax_case("bfloat16")
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = self.generate(c, out)
    self.assertIn("jnp.maximum(", src)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("2 output(s) hold the predicted values", run.stdout)


class ImportTest(unittest.TestCase):

  KERNEL = VECTOR_STORE_KERNEL

  def import_value(self, expr):
    c = import_source(self.KERNEL % expr)
    (scope,) = c["program"]
    return c, scope["body"][-1]

  def test_maximum_of_smem_and_input(self):
    c, op = self.import_value("jnp.maximum(smem[...], x_ref[...])")
    x, o = c["inputs"][0]["name"], c["outputs"][0]["name"]
    self.assertEqual(op, {"op": "vector_store", "dst": {"output": o},
                          "value": {"max": [{"load": {"alloc": "smem"}},
                                            {"load": {"input": x}}]}})

  def test_minimum_with_a_constant_and_nested(self):
    _, op = self.import_value("jnp.minimum(smem[...], 3)")
    self.assertEqual(op["value"], {"min": [{"load": {"alloc": "smem"}}, {"const": 3}]})
    _, op = self.import_value("jnp.maximum(smem[...] - 1, jnp.zeros_like(smem[...])) * 2")
    sm = {"load": {"alloc": "smem"}}
    self.assertEqual(op["value"], {"mul": [{"max": [{"sub": [sm, {"const": 1}]}, {"const": 0}]},
                                           {"const": 2}]})

  def test_still_refused(self):
    with self.assertRaises(Exception) as cm:
      self.import_value("jnp.abs(smem[...])")
    self.assertRegex(str(cm.exception), r"k\.py:12: a vector store of a value the importer does "
                     r"not follow: it comes from `abs`")
    self.assertIn("min, max", str(cm.exception))

  def test_round_trip(self):
    for dtype in ("float32", "uint16", "int32"):
      c = minmax_case(dtype)
      with self.subTest(dtype=dtype):
        self.assertIsNone(round_trip_difference(c))

if __name__ == "__main__":
  unittest.main()
