"""vector_store value {"convert": {"from": F, "value": V}} (`V.astype(dtype)`,
lax.convert_element_type; docs/case-format.md "vector_store") through the Python side: the
translation run in interpret mode (jax-interpret: XLA on the CPU), the compiler's lowering
(jax-lower) and the lowered module evaluated on the CPU (jax-ir: arith.truncf/extf/sitofp/uitofp/
fptosi/fptoui/trunci/extsi/extui on vectors, Warpgroup's `min.NaN`/`max.NaN` clamp before a float
becomes an integer), under Lane and Warpgroup semantics; Lane's incompatible register layouts;
the repro script (cfjax_repro_body); `collfuzz import` (cfjax_import_vectors) and the round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_convert.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_convert.py'

Expected outputs are computed here with numpy / ml_dtypes from the inputs' fills (an integer
becoming a bfloat16 with one rounding by `rne_int`: ml_dtypes rounds it through float32, twice,
as XLA does), never copied from a run; the telling elements are also spelt out by hand.
"""

import json
import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from loop_case_support import executor, import_source, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_ir_ops_convert as conv  # noqa: E402
import cfjax_repro  # noqa: E402

BF16 = ml_dtypes.bfloat16
INCOMPATIBLE = ("lower", "ValueError", "Incompatible FragmentedArray layouts")
RUNS = (("interpret", "lane"), ("ir", "lane"), ("ir", "warpgroup"))

# (source, target, input values): every result specified (no NaN, no subnormal result, no float
# out of the integer target's range), so the outputs compare bit for bit.
PAIRS = {
    "f32_f16_ties": ("float32", "float16", [
        1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -11 + 2 ** -20, 65504.0, 65519.99609375,
        65520.0, -65520.0, 1e6, -2.5, 0.0, -0.0, 0.100000001490116119384765625]),
    "f32_bf16": ("float32", "bfloat16", [
        1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 3e38, 3.4e38, -7.75, 1e-30]),
    "f16_bf16": ("float16", "bfloat16", [
        1 + 2 ** -10, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -10, 65504.0, 2 ** -15,
        -3.0]),
    "bf16_f16_overflow": ("bfloat16", "float16", [
        70144.0, -99840.0, 65536.0, 65280.0, 1 + 2 ** -7, 3.140625, 2 ** -14]),
    "i32_i16_wrap": ("int32", "int16", [
        70000, -70000, 32768, 65535, -1, 2 ** 31 - 1, -2 ** 31, 12345]),
    "i16_i32": ("int16", "int32", [-1, -32768, 32767, 0, -2]),
    "u16_i32": ("uint16", "int32", [65535, 32768, 0, 1]),
    "i16_u32": ("int16", "uint32", [-1, -32768, 32767, 0]),
    "u32_f32_rounding": ("uint32", "float32", [
        2 ** 32 - 1, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 31 + 128, 2 ** 31 + 384, 3_000_000_000, 7]),
    "i32_bf16": ("int32", "bfloat16", [
        2 ** 30 + 2 ** 22 + 1, -(2 ** 30 + 2 ** 22 + 1), 2 ** 24 + 1, 257, 259, -2 ** 31,
        2 ** 31 - 1]),
    "f32_i32_trunc": ("float32", "int32", [
        -2.7, 2.7, -0.5, 2147483520.0, -2.0 ** 31, 123456.75, -123456.75]),
    "f32_u16": ("float32", "uint16", [65535.8984375, 1.5, 0.99, 40000.5, 0.0, -0.5]),
    # 8-bit (2026-12-07): int8 -> bfloat16 is inline PTX (prmt, and, sub.bf16x2), the rest arith
    "i8_bf16": ("int8", "bfloat16", [-128, -127, -1, 0, 1, 5, 126, 127, -64, 64, -3]),
    "u8_bf16": ("uint8", "bfloat16", [0, 1, 127, 128, 200, 255, 254, 3]),
    "i8_f32": ("int8", "float32", [-128, 127, -1, 0, 77]),
    "i8_u16": ("int8", "uint16", [-128, 127, -1, 0]),
    "u8_i32": ("uint8", "int32", [255, 128, 0, 1]),
    "i32_i8_wrap": ("int32", "int8", [128, 255, 256, -129, 70000, -1, 2 ** 31 - 1, 100]),
    "f32_i8_trunc": ("float32", "int8", [-128.9, 127.9, -2.7, 2.7, -0.5, 0.0, 100.25]),
    "f16_u8": ("float16", "uint8", [255.875, 0.75, 128.5, 3.0, 0.0]),
    "bf16_i8": ("bfloat16", "int8", [-128.0, 127.0, -1.5, 1.5, 64.0]),
}


def exact(src, values):
  """The values as numbers the dtype holds exactly (what a `values` fill carries)."""
  a = np.asarray(values, np.float64 if src.startswith(("float", "bfloat")) else np.int64)
  a = a.astype(cfjax_fill.numpy_dtype(src))
  return [float(v) if a.dtype.kind in "fV" else int(v) for v in a]


def rne_int(v, p):
  """The integer v rounded to p significant bits, ties to even (one rounding)."""
  a = abs(v)
  e = a.bit_length() - p
  if e <= 0:
    return v
  q, r = divmod(a, 1 << e)
  if r > 1 << (e - 1) or (r == 1 << (e - 1) and q % 2):
    q += 1
  return (q << e) * (1 if v >= 0 else -1)


def model(src, dst, x, interpret):
  """x (an array of src) converted to dst: the hardware's conversion (Mosaic GPU's arith ops,
  PTX cvt) or, `interpret`, XLA's on the CPU (an int32/uint32 becomes a bfloat16 through float32,
  rounded twice; a float becomes an integer saturated, NaN 0)."""
  x = np.asarray(x)
  fsrc = x.dtype.kind in "fV"
  dt = cfjax_fill.numpy_dtype(dst)
  if fsrc and np.dtype(dt).kind in "fV":
    with np.errstate(over="ignore"):
      return x.astype(np.float32).astype(dt)  # f32 holds every f16 / bf16: one rounding
  if fsrc:
    info = np.iinfo(dt)
    f = x.astype(np.float64)
    t = np.where(np.isnan(f), 0, np.trunc(np.nan_to_num(f, posinf=info.max, neginf=info.min)))
    assert interpret or np.all((t >= info.min) & (t <= info.max)), "unspecified on the hardware"
    return np.clip(t, info.min, info.max).astype(dt)
  if np.dtype(dt).kind in "fV":
    if dst == "bfloat16" and (interpret or x.dtype.itemsize < 4):
      return x.astype(np.float32).astype(dt)  # exact into float32 below 32 bits
    p = {"float32": 24, "float16": 11, "bfloat16": 8}[dst]
    return np.asarray([float(rne_int(int(v), p)) for v in x], np.float64).astype(dt)
  return x.astype(dt)  # numpy: extension by the source's signedness, wrap when narrowing


def convert_case(src, dst, values, n=256, semantics="lane", profile="interpret", value=None):
  """x: src[n] (the values repeated), o: dst[n] = x.astype(dst) (or `value`)."""
  vals = exact(src, values)
  vals = (vals * (n // len(vals) + 1))[:n]
  x = {"name": "x", "shape": [n], "dtype": src, "fill": {"pattern": "values", "values": vals}}
  value = value or {"convert": {"from": src, "value": {"load": {"input": "x"}}}}
  return {"format": 1, "name": f"convert_{src}_{dst}", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [x], "outputs": [{"name": "o", "shape": [n], "dtype": dst}],
          "program": [{"op": "vector_store", "dst": {"output": "o"}, "value": value}]}


def run(case, mode, semantics):
  c = json.loads(json.dumps(case))
  c["target"]["semantics"] = semantics
  c["target"]["profile"] = "interpret" if mode == "interpret" else "mosaic"
  return executor(mode).run(c)


def out_array(out, spec, k=0):
  a = np.frombuffer(bytes.fromhex(out["outputs"][k]["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def bits(a):
  a = np.asarray(a)
  return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


class SemanticsTest(unittest.TestCase):
  """jax-ir's element conversions (cfjax_ir_ops_convert) and cfjax_case.converted_const."""

  def f(self, v, et):
    return conv.float_bits(v, et)

  def test_int_to_float_rounds_once(self):
    self.assertEqual(conv.round_int(2 ** 30 + 2 ** 22 + 1, "bf16"),
                     self.f(2.0 ** 30 + 2 ** 23, "bf16"))
    self.assertEqual(conv.round_int(2 ** 30 + 2 ** 22, "bf16"), self.f(2.0 ** 30, "bf16"))  # tie
    self.assertEqual(conv.round_int(259, "bf16"), self.f(260.0, "bf16"))
    self.assertEqual(conv.round_int(2 ** 24 + 3, "f32"), self.f(2.0 ** 24 + 4, "f32"))
    self.assertEqual(conv.round_int(65519, "f16"), self.f(65504.0, "f16"))
    self.assertEqual(conv.round_int(65520, "f16"), 0x7C00)  # rounds to 2^16: infinity
    self.assertEqual(conv.round_int(-(2 ** 31), "f16"), 0xFC00)

  def test_float_to_int_truncates_and_saturates(self):
    self.assertEqual(conv.to_int(-2.7, 32, True), (-2) & 0xFFFFFFFF)
    self.assertEqual(conv.to_int(1e10, 16, True), 0x7FFF)
    self.assertEqual(conv.to_int(-1e10, 16, True), 0x8000)
    self.assertEqual(conv.to_int(-3.5, 16, False), 0)
    self.assertEqual(conv.to_int(float("nan"), 32, False), 0)
    self.assertEqual(conv.to_int(float("inf"), 32, False), 0xFFFFFFFF)

  def test_float_narrowing(self):
    self.assertEqual(self.f(1 + 2 ** -11, "f16"), self.f(1.0, "f16"))
    self.assertEqual(self.f(1 + 3 * 2 ** -11, "f16"), self.f(1 + 2 ** -9, "f16"))
    self.assertEqual(self.f(65520.0, "f16"), 0x7C00)
    self.assertEqual(conv.float_value(self.f(1 + 2 ** -8, "bf16"), "bf16"), 1.0)

  def test_converted_const(self):
    cc = cfjax_case.converted_const
    self.assertEqual(cc(3, "int32", "float16"), 3)
    self.assertEqual(cc(3.0, "float32", "int16"), 3)
    self.assertIsNone(cc(0.10000000149011612, "float32", "float16"))  # rounds
    self.assertIsNone(cc(1.5, "float32", "int32"))  # truncates
    self.assertIsNone(cc(-1, "int32", "uint32"))  # wraps
    self.assertIsNone(cc(65536.0, "float32", "float16"))  # overflows
    self.assertIsNone(cc(257, "int32", "bfloat16"))
    self.assertIsNone(cc(-0.0, "float32", "int32"))  # the zero's sign
    self.assertEqual(cc(3, "int8", "int32"), 3)
    self.assertEqual(cc(-128, "int32", "int8"), -128)
    self.assertIsNone(cc(128, "int32", "int8"))  # wraps
    self.assertIsNone(cc(-1, "int8", "uint8"))  # wraps
    self.assertIsNone(cc(2.5, "float32", "uint8"))  # truncates
    self.assertEqual(str(cc(-0.0, "float32", "bfloat16")), "-0.0")


class PairTest(unittest.TestCase):
  """interpret mode and jax-ir (Lane and Warpgroup) give the model's bits on every pair."""

  def check(self, key, n=256):
    src, dst, values = PAIRS[key]
    case = convert_case(src, dst, values, n)
    x = np.asarray(cfjax_fill.fill_array(case["inputs"][0]))
    for mode, sem in RUNS:
      out = run(case, mode, sem)
      with self.subTest(pair=key, mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
        want = model(src, dst, x, mode == "interpret")
        np.testing.assert_array_equal(bits(out_array(out, case["outputs"][0])), bits(want))
    return x

  def test_f32_to_f16_ties_and_overflow(self):
    self.check("f32_f16_ties")
    got = model("float32", "float16", np.float32([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519.99609375,
                                                  65520.0]), False)
    self.assertEqual(got.tolist(), [1.0, 1 + 2 ** -9, 65504.0, float("inf")])

  def test_f32_to_bf16(self):
    self.check("f32_bf16")

  def test_f16_to_bf16(self):
    self.check("f16_bf16")

  def test_bf16_to_f16_overflows_to_inf(self):
    self.check("bf16_f16_overflow")
    got = model("bfloat16", "float16", np.asarray([70144.0, -99840.0, 65536.0], BF16), False)
    self.assertEqual(got.tolist(), [float("inf"), float("-inf"), float("inf")])

  def test_i32_to_i16_wraps(self):
    self.check("i32_i16_wrap")
    self.assertEqual(model("int32", "int16", np.int32([70000, 32768, 2 ** 31 - 1]), False).tolist(),
                     [4464, -32768, -1])

  def test_extension_by_the_source_signedness(self):
    self.check("i16_i32")
    self.check("u16_i32")
    self.check("i16_u32")
    self.assertEqual(model("uint16", "int32", np.uint16([65535]), False).tolist(), [65535])
    self.assertEqual(model("int16", "uint32", np.int16([-1]), False).tolist(), [2 ** 32 - 1])

  def test_u32_to_f32_rounds(self):
    self.check("u32_f32_rounding", n=128)
    self.check("u32_f32_rounding", n=2048)
    got = model("uint32", "float32", np.uint32([2 ** 32 - 1, 2 ** 24 + 3, 2 ** 31 + 128]), False)
    self.assertEqual(got.tolist(), [2.0 ** 32, 2.0 ** 24 + 4, 2.0 ** 31])

  def test_i32_to_bf16_once_on_the_hardware_twice_in_interpret_mode(self):
    self.check("i32_bf16")
    v = np.int32([2 ** 30 + 2 ** 22 + 1, -(2 ** 30 + 2 ** 22 + 1)])
    self.assertEqual(model("int32", "bfloat16", v, False).astype(np.float64).tolist(),
                     [2.0 ** 30 + 2 ** 23, -(2.0 ** 30 + 2 ** 23)])
    self.assertEqual(model("int32", "bfloat16", v, True).astype(np.float64).tolist(),
                     [2.0 ** 30, -(2.0 ** 30)])

  def test_f32_to_i32_truncates_toward_zero(self):
    self.check("f32_i32_trunc", n=512)
    self.assertEqual(model("float32", "int32", np.float32([-2.7, -123456.75]), False).tolist(),
                     [-2, -123456])

  def test_f32_to_u16(self):
    self.check("f32_u16", n=2048)

  def test_8bit(self):
    """int8 -> bfloat16 at every register width of the strided layout (vec_size 1 at 128
    elements: arith.sitofp; 2 at 256: the inline-PTX pair with an undefined pad; 4 and 8 at 512
    and 1024: the four-byte words), and the other 8-bit conversions."""
    for n in (128, 256, 512, 1024):
      with self.subTest(n=n):
        self.check("i8_bf16", n=n)
    for key in ("u8_bf16", "i8_f32", "i8_u16", "u8_i32", "i32_i8_wrap", "f32_i8_trunc",
                "f16_u8", "bf16_i8"):
      with self.subTest(pair=key):
        self.check(key)

  def test_out_of_range_saturates(self):
    """Interpret mode saturates an out-of-range float (infinities included): compared; on the
    hardware it is unspecified, and jax-ir saturates as PTX's cvt.rzi does, a NaN (made as
    inf - inf) giving 0. Interpret mode's NaN is not asserted: XLA on the CPU gives 0 for a
    loaded NaN but INT_MIN for this one (float32 to int16/int32, 0.11.2 and 0.12.0.1)."""
    x = {"load": {"input": "x"}}
    big = {"mul": [x, {"const": 16}]}  # 3e38 * 16 = inf
    nan = convert_case("float32", "int16", [3e38], 128,
                       value={"convert": {"from": "float32", "value": {"sub": [big, big]}}})
    inf = convert_case("float32", "int16", [3e38], 128, value={"add": [
        {"convert": {"from": "float32", "value": big}},
        {"convert": {"from": "float32", "value": {"sub": [{"const": 0}, big]}}}]})
    sat = convert_case("float32", "int16", [1e6, -1e6, 40000.0, -32768.9], 128)
    for mode, sem in RUNS:
      with self.subTest(mode=mode, semantics=sem):
        out = run(sat, mode, sem)
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        self.assertEqual(out_array(out, sat["outputs"][0])[:4].tolist(),
                         [32767, -32768, 32767, -32768])
        out = run(inf, mode, sem)  # 32767 + -32768, wrapping nowhere
        self.assertEqual(set(out_array(out, inf["outputs"][0]).tolist()), {-1})
        if mode == "ir":
          out = run(nan, mode, sem)
          self.assertEqual(set(out_array(out, nan["outputs"][0]).tolist()), {0})

  def test_round_trip_through_float16(self):
    """x.astype(f16).astype(f32): the float16 rounding kept."""
    values = [1 + 2 ** -11 + 2 ** -20, 3.14159274101257324, 70000.0, -1e-3, 2.0]
    inner = {"convert": {"from": "float32", "value": {"load": {"input": "x"}}}}
    case = convert_case("float32", "float32", values, 512,
                        value={"convert": {"from": "float16", "value": inner}})
    x = np.asarray(cfjax_fill.fill_array(case["inputs"][0]))
    with np.errstate(over="ignore"):
      want = x.astype(np.float16).astype(np.float32)
    self.assertEqual(want[:3].tolist(), [1 + 2 ** -10, 3.140625, float("inf")])
    for mode, sem in RUNS:
      out = run(case, mode, sem)
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(bits(out_array(out, case["outputs"][0])), bits(want))

  def test_constants_only(self):
    """Converted splats: (5 - 7).astype(f32) and jnp.maximum(3, 7) in bfloat16 to float16 (Lane:
    scalar registers, an arith.bitcast around `max.NaN.bf16`), the input never read."""
    for src, dst, inner, want in (
        ("int32", "float32", {"sub": [{"const": 5}, {"const": 7}]}, -2.0),
        ("bfloat16", "float16", {"max": [{"const": 3}, {"const": 7}]}, 7.0),
        ("float32", "bfloat16", {"sub": [{"const": 0.5}, {"const": 2}]}, -1.5)):
      case = convert_case(src, dst, [1], 128, value={"convert": {"from": src, "value": inner}})
      for mode, sem in RUNS:
        out = run(case, mode, sem)
        with self.subTest(src=src, mode=mode, semantics=sem):
          self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
          self.assertEqual(set(out_array(out, case["outputs"][0]).astype(np.float64)), {want})


class LayoutTest(unittest.TestCase):
  """Lane: `t32[...].astype(f16) + t16[...]` mixes a float32 load's register layout (2 elements
  a lane at N=512) with a float16 one's (4): Incompatible FragmentedArray layouts at stage lower,
  in jax-lower and jax-ir alike; at N=256 both hold 2, and Warpgroup lowers every N."""

  def case(self, n):
    a = {"name": "a", "shape": [n], "dtype": "float32",
         "fill": {"pattern": "values", "values": [k * 0.25 for k in range(n)]}}
    b = {"name": "b", "shape": [n], "dtype": "float16",
         "fill": {"pattern": "values", "values": [(k % 7) - 3 for k in range(n)]}}
    value = {"add": [{"convert": {"from": "float32", "value": {"load": {"input": "a"}}}},
                     {"load": {"input": "b"}}]}
    c = {"format": 1, "name": f"mixed_{n}", "mesh": {},
         "target": {"arch": "sm_90a", "semantics": "lane", "profile": "mosaic"},
         "inputs": [a, b], "outputs": [{"name": "o", "shape": [n], "dtype": "float16"}],
         "program": [{"op": "vector_store", "dst": {"output": "o"}, "value": value}]}
    x = np.asarray(cfjax_fill.fill_array(a)).astype(np.float16)
    y = np.asarray(cfjax_fill.fill_array(b))
    return c, (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)

  def test_lane_n512_rejected(self):
    c, _ = self.case(512)
    for mode in ("lower", "ir"):
      out = run(c, mode, "lane")
      with self.subTest(mode=mode):
        self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
        d = out["diagnostic"]
        self.assertEqual((d["stage"], d["exception"], d["message"]), INCOMPATIBLE)

  def test_lowers_at_n256_and_under_warpgroup(self):
    for n, sem in ((256, "lane"), (256, "warpgroup"), (512, "warpgroup")):
      c, want = self.case(n)
      out = run(c, "lower", sem)
      with self.subTest(n=n, semantics=sem, mode="lower"):
        self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
        self.assertIn("lowered for CUDA without an error", out["reason"])
      out = run(c, "ir", sem)
      with self.subTest(n=n, semantics=sem, mode="ir"):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(out_array(out, c["outputs"][0]), want)


class ReproTest(unittest.TestCase):

  def generate(self, case, expected_out=None):
    return cfjax_repro.generate({
        "case": case, "mode": "interpret",
        "expected": expected_out or {"kind": "completed", "outputs": []}, "match": "exact",
        "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})

  def test_the_store_lines(self):
    inner = {"add": [{"load": {"input": "x"}}, {"const": 1}]}
    c = convert_case("float32", "float16", [1.5], 128,
                     value={"convert": {"from": "float32", "value": inner}})
    lines = [ln.strip() for ln in self.generate(c).splitlines() if "[...] =" in ln]
    self.assertEqual(lines, ["o[...] = (x[...] + jnp.full((128,), 1.0, jnp.float32))"
                             ".astype(jnp.float16)  # $.program[0]"])
    c = convert_case("float32", "float32", [1.5], 128, value={"add": [
        {"convert": {"from": "float16", "value": {
            "convert": {"from": "float32", "value": {"load": {"input": "x"}}}}}},
        {"convert": {"from": "int32", "value": {"const": -3}}}]})
    self.assertIn("o[...] = x[...].astype(jnp.float16).astype(jnp.float32) + "
                  "jnp.full((128,), -3, jnp.int32).astype(jnp.float32)  # $.program[0]",
                  self.generate(c))

  def test_script_runs_and_asserts_the_outputs(self):
    c = convert_case(*PAIRS["i32_bf16"][:2], PAIRS["i32_bf16"][2], 128)
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = self.generate(c, out)
    self.assertIn("x[...].astype(jnp.bfloat16)", src)
    proc = run_script(src)
    self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-4000:])
    self.assertIn("1 output(s) hold the predicted values", proc.stdout)


class ImportTest(unittest.TestCase):

  KERNEL = textwrap.dedent('''
      import jax
      import jax.numpy as jnp
      from jax import lax
      from jax.experimental import pallas as pl
      from jax.experimental.pallas import mosaic_gpu as plgpu

      def collfuzz_case():
        def body(x_ref, o_ref, t_ref, bar):
          plgpu.copy_gmem_to_smem(x_ref, t_ref, bar.at[0])
          plgpu.barrier_wait(bar.at[0])
          o_ref[...] = %s

        kernel = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((128,), jnp.%s),
            scratch_types=[plgpu.SMEM((128,), jnp.%s), plgpu.Barrier(num_barriers=1)])
        return kernel, [jnp.arange(128).astype(jnp.%s)]
      ''')

  def import_value(self, expr, out="float16", src="float32"):
    c = import_source(self.KERNEL % (expr, out, src, src))
    (scope,) = c["program"]
    return scope["body"][-1]["value"]

  T = {"load": {"alloc": "t_ref"}}

  def test_astype_of_a_product(self):
    self.assertEqual(self.import_value("(t_ref[...] * 2).astype(jnp.float16)"),
                     {"convert": {"from": "float32", "value": {"mul": [self.T, {"const": 2}]}}})

  def test_plus_one_unchanged(self):
    for dt in ("int32", "float16", "bfloat16", "uint16"):
      with self.subTest(dtype=dt):
        self.assertEqual(self.import_value("t_ref[...] + 1", dt, dt),
                         {"add": [self.T, {"const": 1}]})

  def test_nested_and_promoted(self):
    self.assertEqual(self.import_value("t_ref[...].astype(jnp.float16).astype(jnp.float32)",
                                       "float32"),
                     {"convert": {"from": "float16", "value": {
                         "convert": {"from": "float32", "value": self.T}}}})
    # float16 + a float32 scalar: JAX promotes the load
    self.assertEqual(self.import_value("t_ref[...] + jnp.float32(2)", "float32", "float16"),
                     {"add": [{"convert": {"from": "float16", "value": self.T}}, {"const": 2}]})

  def test_constants_fold_when_exact(self):
    self.assertEqual(self.import_value(
        "t_ref[...].astype(jnp.float16) + jnp.full((128,), 3, jnp.float32).astype(jnp.float16)"),
        {"add": [{"convert": {"from": "float32", "value": self.T}}, {"const": 3}]})
    self.assertEqual(self.import_value(
        "jnp.full((128,), -1, jnp.int32).astype(jnp.uint32) + t_ref[...]", "uint32", "uint32"),
        {"add": [{"convert": {"from": "int32", "value": {"const": -1}}}, self.T]})

  def test_8bit(self):
    # 8-bit conversions (2026-12-07): int8 and uint8 convert like the other dtypes; the 8-bit
    # arithmetic rule asks for exactly this upcast, add, downcast.
    self.assertEqual(self.import_value("t_ref[...].astype(jnp.int8).astype(jnp.int32)", "int32"),
                     {"convert": {"from": "int8", "value": {
                         "convert": {"from": "float32", "value": self.T}}}})
    self.assertEqual(self.import_value("(t_ref[...].astype(jnp.int16) + 1).astype(jnp.int8)",
                                       "int8", "int8"),
                     {"convert": {"from": "int16", "value": {
                         "add": [{"convert": {"from": "int8", "value": self.T}}, {"const": 1}]}}})
    self.assertEqual(self.import_value("t_ref[...].astype(jnp.bfloat16)", "bfloat16", "uint8"),
                     {"convert": {"from": "uint8", "value": self.T}})
    # a constant that the 8-bit dtype holds exactly folds; one that wraps stays a conversion
    self.assertEqual(self.import_value(
        "t_ref[...] + jnp.full((128,), 100, jnp.int32).astype(jnp.int8)", "int8", "int8"),
        {"add": [self.T, {"const": 100}]})
    self.assertEqual(self.import_value(
        "t_ref[...] ^ jnp.full((128,), 300, jnp.int32).astype(jnp.int8)", "int8", "int8"),
        {"xor": [self.T, {"convert": {"from": "int32", "value": {"const": 300}}}]})

  def test_round_trip(self):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    t = {"load": {"input": "x"}}
    values = {
        "float16": {"convert": {"from": "float32", "value": {"add": [t, {"const": 0.5}]}}},
        "uint32": {"add": [{"convert": {"from": "float32", "value": t}},
                           {"convert": {"from": "int32", "value": {"const": -1}}}]},
        "int16": {"convert": {"from": "bfloat16", "value": {
            "convert": {"from": "float32", "value": t}}}},
        "float32": {"convert": {"from": "float16", "value": {
            "convert": {"from": "float32", "value": t}}}},
    }
    for dst, value in values.items():
      c = convert_case("float32", dst, [1.5, -2.0, 7.25], 256, value=value)
      with self.subTest(dst=dst):
        src = cfjax_repro.generate({"case": c, "mode": "interpret",
                                    "expected": {"kind": "completed", "outputs": []}})
        got = import_source(src)
        self.assertIn("convert", json.dumps(got["program"]))
        a, b = import_roundtrip.canonical(c), import_roundtrip.canonical(got)
        for arr in a["inputs"] + b["inputs"]:
          arr.pop("fill", None)  # a values fill's 1.0 comes back as 1 (the tool's, not ours)
        self.assertIsNone(import_roundtrip.first_difference(a, b))

  def test_canonical_folds_an_exact_constant(self):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    c = convert_case("float32", "float16", [1.5], 128, value={"add": [
        {"load": {"input": "x"}}, {"convert": {"from": "int32", "value": {"const": 3}}}]})
    c["inputs"][0]["dtype"] = "float16"
    self.assertEqual(import_roundtrip.canonical(c)["program"][0]["value"],
                     {"add": [{"load": {"input": "in0", "index": []}}, {"const": 3}]})


if __name__ == "__main__":
  unittest.main()
