"""copy_smem_to_gmem's `reduction_op` (plgpu.copy_smem_to_gmem(src, dst, reduction_op=...), a
reducing TMA store) through the Python side: the case field (cfjax_case), the translation and
interpret mode's refusal at run time, the repro script (cfjax_repro_body), `collfuzz import`
(cfjax_import_copies) and jax-ir's `cp.reduce.async.bulk.tensor` (cfjax_ir_ops_ptx, cfjax_ir_tma).

    .venv-jax/bin/python -m unittest tests/jax/test_reduction_op.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_reduction_op.py

Calls the modules directly (no build/release/collfuzz).
"""

import json
import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_source, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_repro  # noqa: E402

NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "int32": np.int32, "uint32": np.uint32, "int64": np.int64}


def values(dtype, xs):
  """An explicit `values` fill: each element as the JSON number of its exact value."""
  a = np.asarray(xs).astype(NP[dtype])
  if dtype in ("float32", "float16", "bfloat16"):
    return {"pattern": "values", "values": [float(v) for v in a.astype(np.float64)]}
  return {"pattern": "values", "values": [int(v) for v in a]}


def reduce_case(dtype, ops, a, b, profile="mosaic", n=128):
  """One CTA: a -> SMEM sa and b -> SMEM sb (one barrier, two phases); then for each output y_k:
  a plain store of sa, then a reducing store of sb with ops[k] (y_k = ops[k](a, b))."""
  body = [
      {"op": "copy_gmem_to_smem", "src": {"input": "a"}, "dst": {"alloc": "sa"},
       "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
      {"op": "copy_gmem_to_smem", "src": {"input": "b"}, "dst": {"alloc": "sb"},
       "barrier": {"alloc": "bar"}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
  ]
  for k, op in enumerate(ops):
    body.append({"op": "copy_smem_to_gmem", "src": {"alloc": "sa"}, "dst": {"output": f"y{k}"}})
    body.append({"op": "copy_smem_to_gmem", "src": {"alloc": "sb"}, "dst": {"output": f"y{k}"},
                 "reduction_op": op})
  return {
      "format": 1, "name": f"reduction_op_{dtype}", "mesh": {"grid": [1], "grid_names": ["g"]},
      "target": {"arch": "sm_90a", "profile": profile},
      "inputs": [{"name": "a", "shape": [n], "dtype": dtype, "fill": values(dtype, a)},
                 {"name": "b", "shape": [n], "dtype": dtype, "fill": values(dtype, b)}],
      "outputs": [{"name": f"y{k}", "shape": [n], "dtype": dtype} for k in range(len(ops))],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "sa", "kind": "smem", "shape": [n], "dtype": dtype},
          {"name": "sb", "kind": "smem", "shape": [n], "dtype": dtype},
          {"name": "bar", "kind": "barrier"}], "body": body}],
  }


def outputs(out, dtype):
  return [np.frombuffer(bytes.fromhex(o["hex"]), NP[dtype]) for o in out["outputs"]]


RNG = np.random.default_rng(20261206)


def ints32(n=128):
  """int32 values over the whole range, with the edges and equal pairs near the front."""
  a = RNG.integers(-2**31, 2**31, n, dtype=np.int64)
  b = RNG.integers(-2**31, 2**31, n, dtype=np.int64)
  a[:6] = [2**31 - 1, -1, 0, 5, -7, -2**31]
  b[:6] = [1, 1, -1, 5, 3, -1]
  return a.astype(np.int32), b.astype(np.int32)


class CaseFieldTest(unittest.TestCase):

  def test_every_jax_name_is_taken_and_others_name_the_field(self):
    self.assertEqual(len(cfjax_case.REDUCTION_OPS), 12)
    for r in cfjax_case.REDUCTION_OPS:
      self.assertEqual(cfjax_case.reduction_op({"reduction_op": r}), r)
    self.assertIsNone(cfjax_case.reduction_op({}))
    self.assertIsNone(cfjax_case.reduction_op({"reduction_op": None}))
    with self.assertRaisesRegex(cfjax_case.CaseError, r"^\$\.program\[0\]\.reduction_op: unknown "
                                r"reduction op 'mul'"):
      cfjax_case.reduction_op({"reduction_op": "mul"}, "$.program[0]")

  def test_translation_refuses_an_unknown_name_naming_the_field(self):
    c = reduce_case("float32", ["mul"], np.ones(128), np.ones(128), profile="interpret")
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "crash", out)
    self.assertIn("$.program[0].body[5].reduction_op: unknown reduction op 'mul'", out["reason"])

  def test_only_plain_stores_count_as_written(self):
    """An element only reductions reach holds op(uninitialised, src): not `written`."""
    c = reduce_case("float32", ["add"], np.ones(128), np.ones(128))
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(c)), {"y0": [[0, 128]]})
    del c["program"][0]["body"][4]  # the plain store
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(c)), {"y0": []})


class InterpretTest(unittest.TestCase):

  def test_interpret_mode_refuses_it_at_run(self):
    """gpu_callbacks.copy_smem_to_gmem raises NotImplementedError inside the callback; the
    executor reports the inner exception (rule interpret.store.reduction_op)."""
    c = reduce_case("float32", ["add"], np.arange(1, 129), np.ones(128), profile="interpret")
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "rejected", out)
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"], d["message"]),
                     ("run", "NotImplementedError", "reduction_op not supported"), d)
    self.assertEqual(d.get("op"), "$.program[0].body[5]")


class ReproTest(unittest.TestCase):

  def request(self, expected):
    c = reduce_case("int32", ["umax"], np.arange(1, 129), np.ones(128), profile="interpret")
    return {"case": c, "mode": "interpret", "expected": expected, "match": "exact",
            "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"}

  def test_script_writes_the_keyword_and_asserts_the_refusal(self):
    exp = {"kind": "rejected", "diagnostic": {
        "stage": "run", "exception": "NotImplementedError",
        "message": "reduction_op not supported", "rule": "interpret.store.reduction_op"}}
    src = cfjax_repro.generate(self.request(exp))
    compile(src, "t.py", "exec")
    self.assertIn('plgpu.copy_smem_to_gmem(sb, y0, reduction_op="umax")', src)
    self.assertIn("plgpu.copy_smem_to_gmem(sa, y0)\n", src)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])

  def test_unknown_name_is_refused_naming_the_field(self):
    req = self.request({"kind": "completed", "outputs": []})
    req["case"]["program"][0]["body"][5]["reduction_op"] = "mul"
    with self.assertRaisesRegex(cfjax_repro.Unsupported,
                                r"\$\.program\[0\]\.body\[5\]\.reduction_op: 'mul'"):
      cfjax_repro.generate(req)


class ImportTest(unittest.TestCase):

  def test_import_reads_the_reduction_op(self):
    kernel = textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def collfuzz_case():
          def body(x_ref, y_ref, smem, bar):
            plgpu.copy_gmem_to_smem(x_ref, smem, bar.at[0])
            plgpu.barrier_wait(bar.at[0])
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(smem, y_ref)
            plgpu.copy_smem_to_gmem(smem, y_ref, reduction_op="add")
            plgpu.wait_smem_to_gmem(0)
          kernel = plgpu.kernel(
              body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32),
              scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier(num_barriers=1)])
          return kernel, [jnp.arange(128, dtype=jnp.float32)]
        ''')
    c = import_source(kernel)
    stores = [op for op in json.loads(json.dumps(c["program"]))[0]["body"]
              if op["op"] == "copy_smem_to_gmem"]
    self.assertEqual(len(stores), 2, c["program"])
    self.assertNotIn("reduction_op", stores[0])
    self.assertEqual(stores[1]["reduction_op"], "add")


  def test_round_trip(self):
    """case -> repro script -> import gives the case back, reduction ops included (the canonical
    form of tools/import_roundtrip.py, plus each store's reduction_op, which it does not carry)."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    ops = ["add", "umin", "smax", "xor"]
    c = reduce_case("int32", ops, *ints32(), profile="interpret")
    src = cfjax_repro.generate({"case": c, "mode": "interpret", "expected": {"kind": "completed",
                                                                             "outputs": []}})
    got = import_source(src)
    self.assertIsNone(import_roundtrip.first_difference(import_roundtrip.canonical(c),
                                                        import_roundtrip.canonical(got)))
    stores = [op for op in got["program"][0]["body"] if op["op"] == "copy_smem_to_gmem"]
    self.assertEqual([op.get("reduction_op") for op in stores],
                     [r for op in ops for r in (None, op)])


class IrTest(unittest.TestCase):
  """jax-ir runs the lowered `cp.reduce.async.bulk.tensor` PTX: y = op(a, b) per element, the
  plain store's a first; expectations computed here with numpy, not with the evaluator's code."""

  def run_ir(self, dtype, ops, a, b):
    out = executor("ir").run(reduce_case(dtype, ops, a, b))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    for o in out["outputs"]:
      self.assertEqual(o["written"], [[0, len(a)]])
    return outputs(out, dtype)

  def check(self, got, want, what):
    """Bit for bit (the output's raw elements against numpy's)."""
    got, want = np.asarray(got), np.asarray(want).astype(got.dtype)
    bad = [i for i in range(len(got)) if got[i:i + 1].tobytes() != want[i:i + 1].tobytes()]
    self.assertEqual(bad, [], f"{what}: first differing element {bad[:1]}: "
                     f"got {got[bad[:1]]}, want {want[bad[:1]]}")

  def test_int32_wraps_and_compares_by_op_name(self):
    a, b = ints32()
    ops = ["add", "umin", "umax", "smin", "smax", "and", "or", "xor"]
    got = self.run_ir("int32", ops, a, b)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    want = [(ua + ub).view(np.int32), np.minimum(ua, ub).view(np.int32),
            np.maximum(ua, ub).view(np.int32), np.minimum(a, b), np.maximum(a, b),
            a & b, a | b, a ^ b]
    for op, g, w in zip(ops, got, want):
      self.check(g, w, op)
    self.assertEqual(int(got[0][0]), -2**31)  # 2**31 - 1 + 1 wraps
    self.assertEqual(int(got[2][1]), -1)      # umax(-1, 1) = 0xffffffff
    self.assertEqual(int(got[4][1]), 1)       # smax(-1, 1) = 1

  def test_uint32_inc_and_dec(self):
    old = RNG.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    src = RNG.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    old[:8] = [0, 0, 5, 5, 5, 2**32 - 1, 2**32 - 2, 7]
    src[:8] = [0, 9, 5, 6, 4, 2**32 - 1, 2**32 - 1, 0]
    src[8:64] = old[8:64] + np.uint32(3)  # old < src: inc counts up, dec counts down
    got_inc, got_dec, got_add = self.run_ir("uint32", ["inc", "dec", "add"], old, src)
    self.check(got_inc, np.where(old >= src, 0, old + np.uint32(1)).astype(np.uint32), "inc")
    self.check(got_dec, np.where((old == 0) | (old > src), src, old - np.uint32(1))
               .astype(np.uint32), "dec")
    self.check(got_add, old + src, "add")
    self.assertEqual([int(v) for v in got_inc[:8]], [0, 1, 0, 6, 0, 0, 2**32 - 1, 0])
    self.assertEqual([int(v) for v in got_dec[:8]], [0, 9, 4, 4, 4, 2**32 - 2, 2**32 - 3, 0])

  def test_float32_add_rounds_to_nearest_even(self):
    a = (RNG.standard_normal(128) * 1000).astype(np.float32)
    b = (RNG.standard_normal(128) * 1000).astype(np.float32)
    a[:4] = [1.0, 2.0**24, 2.0**24 + 2, 1e30]
    b[:4] = [2.0, 1.0, 1.0, -1e30]
    (got,) = self.run_ir("float32", ["add"], a, b)
    self.check(got, a + b, "add")
    self.assertEqual([float(v) for v in got[:4]], [3.0, 2.0**24, 2.0**24 + 4, 0.0])

  def test_float16_and_bfloat16_add_min_max(self):
    for dtype in ("float16", "bfloat16"):
      dt = NP[dtype]
      a = (RNG.standard_normal(128) * 100).astype(dt)
      b = (RNG.standard_normal(128) * 100).astype(dt)
      a[:2], b[:2] = [3.0, -2.0], [3.0, 5.0]
      got_add, got_min, got_max = self.run_ir(dtype, ["add", "min", "max"], a, b)
      want_add = (a.astype(np.float64) + b.astype(np.float64)).astype(dt)  # one rounding
      self.check(got_add, want_add, f"{dtype} add")
      self.check(got_min, np.where(a.astype(np.float32) <= b.astype(np.float32), a, b),
                 f"{dtype} min")
      self.check(got_max, np.where(a.astype(np.float32) >= b.astype(np.float32), a, b),
                 f"{dtype} max")

  def test_int64_signed_and_unsigned(self):
    a = RNG.integers(-2**63, 2**63, 128, dtype=np.int64)
    b = RNG.integers(-2**63, 2**63, 128, dtype=np.int64)
    a[0], b[0] = 2**63 - 1, 1
    ops = ["add", "umax", "smin", "xor"]
    got = self.run_ir("int64", ops, a, b)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    want = [(ua + ub).view(np.int64), np.maximum(ua, ub).view(np.int64), np.minimum(a, b), a ^ b]
    for op, g, w in zip(ops, got, want):
      self.check(g, w, op)
    self.assertEqual(int(got[0][0]), -2**63)

  def test_a_row_of_a_2d_output_and_a_reduction_only_row(self):
    """The box at nonzero coordinates: y[2] = a then += b; y[3] only gets += b (not written: its
    prior contents are undefined on a GPU; jax-ir's zeroed buffer gives 0 + b, never compared)."""
    a = np.arange(1, 65, dtype=np.float32) * 0.5
    b = np.full(64, 0.25, np.float32)
    c = reduce_case("float32", ["add"], a, b, n=64)
    c["outputs"][0]["shape"] = [4, 64]
    body = c["program"][0]["body"]
    body[4]["dst"]["index"] = [2]
    body[5]["dst"]["index"] = [2]
    body.append({"op": "copy_smem_to_gmem", "src": {"alloc": "sb"},
                 "dst": {"output": "y0", "index": [3]}, "reduction_op": "add"})
    out = executor("ir").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    self.assertEqual(out["outputs"][0]["written"], [[128, 192]])
    (y,) = outputs(out, "float32")
    self.check(y[128:192], a + b, "row 2")
    self.check(y[192:256], b, "row 3 (zeroed buffer + b)")
    self.check(y[:128], np.zeros(128, np.float32), "rows 0 and 1 untouched")

  def test_element_functions_edges(self):
    """What no JSON fill can hold (NaN) and signed zeros, on the element function directly."""
    import cfjax_ir_tma  # pylint: disable=import-outside-toplevel
    from cfjax_ir_extract import Unsupported  # pylint: disable=import-outside-toplevel
    f16 = lambda x: int(np.array([x], np.float16).view(np.uint16)[0])  # noqa: E731
    fmin, fmax = cfjax_ir_tma.reduce_element("min", 5), cfjax_ir_tma.reduce_element("max", 5)
    self.assertEqual(fmin(f16(np.nan), f16(2.0)), f16(2.0))
    self.assertEqual(fmax(f16(1.0), f16(np.nan)), f16(1.0))
    self.assertEqual(fmin(f16(0.0), f16(-0.0)), f16(-0.0))
    self.assertEqual(fmax(f16(-0.0), f16(0.0)), f16(0.0))
    self.assertEqual(cfjax_ir_tma.reduce_element("add", 6)(0x7F800000, 0xFF800000), 0x7FFFFFFF)
    for op, code in (("inc", 4), ("dec", 9), ("min", 6), ("and", 5), ("add", 1)):
      with self.assertRaises(Unsupported):
        cfjax_ir_tma.reduce_element(op, code)


if __name__ == "__main__":
  unittest.main()
