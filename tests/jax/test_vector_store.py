"""vector_store through the Python side: `dst.at[idx][...] = value` (JAX's `swap`) with a value made
of SMEM and input loads, constants and add/sub/mul (docs/case-format.md "vector_store"): the case
helpers (cfjax_case), the translation run in interpret mode (jax-interpret), the compiler's lowering
(jax-lower) and the lowered module evaluated on the CPU (jax-ir: vector.load/store, arith on
vectors, memref.collapse_shape), under Lane and Warpgroup semantics; the repro script
(cfjax_repro_body); `collfuzz import` (cfjax_import_vectors) and the round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_vector_store.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_vector_store.py'

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

from loop_case_support import VECTOR_STORE_KERNEL, executor, import_source, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402

HALF = {"start": {"axis": "x", "mul": 128}, "size": 128}  # pl.ds(lax.axis_index("x") * 128, 128)


def vcase(name, out, value, dst_index=None, inputs=(), cluster=2, allocs=None, pre=(),
          semantics="lane", profile="interpret"):
  """One vector_store of `value` into out (an array spec), after the ops `pre`, inside a
  run_scoped of `allocs` when given; a cluster of `cluster` CTAs along "x" (none for 0)."""
  store = {"op": "vector_store", "dst": {"output": out["name"]}, "value": value}
  if dst_index is not None:
    store["dst"]["index"] = dst_index
  body = list(pre) + [store]
  program = [{"op": "run_scoped", "allocs": allocs, "body": body}] if allocs else body
  return {"format": 1, "name": name,
          "mesh": {"cluster": [cluster], "cluster_names": ["x"]} if cluster else {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": list(inputs), "outputs": [out], "program": program}


def ones_halves():
  """Two CTAs, each storing jnp.ones into its own half of an int32[256]."""
  return vcase("ones_halves", {"name": "o", "shape": [256], "dtype": "int32"}, {"const": 1},
               [HALF])


def smem_plus_one(dtype="int32"):
  """One CTA: x -> SMEM tile by TMA, barrier wait, o = tile + 1."""
  spec = {"name": "x", "shape": [128], "dtype": dtype}
  return vcase("smem_plus_one", {"name": "o", "shape": [128], "dtype": dtype},
               {"add": [{"load": {"alloc": "buf"}}, {"const": 1}]}, inputs=[spec], cluster=0,
               allocs=[{"name": "buf", "kind": "smem", "shape": [128], "dtype": dtype},
                       {"name": "bar", "kind": "barrier", "num_barriers": 1}],
               pre=[{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "buf"},
                     "barrier": {"alloc": "bar", "index": 0}},
                    {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}])


def input_times_two_minus_three():
  """Two CTAs: o[half] = x[half] * 2 - 3 (int32[256], each CTA its own half)."""
  x = {"name": "x", "shape": [256], "dtype": "int32"}
  return vcase("input_affine", {"name": "o", "shape": [256], "dtype": "int32"},
               {"sub": [{"mul": [{"load": {"input": "x", "index": [HALF]}}, {"const": 2}]},
                        {"const": 3}]}, [HALF], inputs=[x])


def rounding_case(dtype):
  """o = x + 2**-(p+1) and x * x, x = 1 + k * 2**-(p) for k = 0..127 (p fraction bits: 10 for
  float16, 7 for bfloat16): the sum is a tie that rounds to even k; the product rounds too."""
  p = {"float16": 10, "bfloat16": 7}[dtype]
  xs = [1 + k * 2.0 ** -p for k in range(128)]
  x = {"name": "x", "shape": [128], "dtype": dtype, "fill": {"pattern": "values", "values": xs}}
  y = {"name": "y", "shape": [2, 128], "dtype": dtype}
  return vcase(f"rounding_{dtype}", y, {"add": [{"load": {"input": "x"}},
                                               {"const": 2.0 ** -(p + 1)}]},
               [0], inputs=[x], cluster=0), xs, p


def rounding_product_case(dtype):
  c, xs, p = rounding_case(dtype)
  c["program"][0]["dst"]["index"] = [1]
  c["program"][0]["value"] = {"mul": [{"load": {"input": "x"}}, {"load": {"input": "x"}}]}
  return c, xs, p


def out_array(out, spec, k=0):
  o = out["outputs"][k]
  a = np.frombuffer(bytes.fromhex(o["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def x_values(spec):
  return np.asarray(cfjax_fill.fill_array(spec))


class CaseTest(unittest.TestCase):

  def test_written_ranges_count_vector_stores(self):
    c = cfjax_case.Case.from_json(ones_halves())
    self.assertEqual(cfjax_case.written_ranges(c), {"o": [[0, 256]]})
    c = cfjax_case.Case.from_json(rounding_case("float16")[0])
    self.assertEqual(cfjax_case.written_ranges(c), {"y": [[0, 128]]})

  def test_index_shape_and_constants(self):
    self.assertEqual(cfjax_case.index_shape([2, 128], [0]), (128,))
    self.assertEqual(cfjax_case.index_shape([256], [HALF]), (128,))
    self.assertEqual(cfjax_case.index_shape([4, 8, 16], [":", {"axis": "x"}]), (4, 16))
    self.assertEqual(cfjax_case.const_number(2.0, "int32"), 2)
    self.assertIsInstance(cfjax_case.const_number(2, "bfloat16"), float)
    with self.assertRaisesRegex(cfjax_case.CaseError, r"^\$\.const: 2\.5 is no integer of int8"):
      cfjax_case.const_number(2.5, "int8")


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir give the values computed here; jax-lower lowers the case."""

  def outputs(self, case, modes=("interpret", "ir"), semantics=("lane", "warpgroup")):
    """{(mode, semantics): the first output} for each run, after checking each completed."""
    got = {}
    for mode in modes:
      for sem in semantics if mode != "interpret" else ("lane",):
        c = json.loads(json.dumps(case))
        c["target"]["semantics"] = sem
        if mode != "interpret":
          c["target"]["profile"] = "mosaic"
        out = executor(mode).run(c)
        if mode == "lower":
          self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
          self.assertIn("lowered for CUDA without an error", out["reason"])
          continue
        self.assertEqual(out["kind"], "completed", (mode, sem, json.dumps(out)[:3000]))
        got[(mode, sem)] = (out, out_array(out, c["outputs"][0]))
    return got

  def test_ones_into_each_ctas_half(self):
    for key, (out, arr) in self.outputs(ones_halves(), ("interpret", "lower", "ir")).items():
      with self.subTest(run=key):
        self.assertEqual(out["outputs"][0]["written"], [[0, 256]])
        np.testing.assert_array_equal(arr, np.ones(256, np.int32))

  def test_smem_tile_plus_one(self):
    c = smem_plus_one()
    want = x_values(c["inputs"][0]).astype(np.int32) + 1
    for key, (_, arr) in self.outputs(c, ("interpret", "lower", "ir")).items():
      with self.subTest(run=key):
        np.testing.assert_array_equal(arr, want)

  def test_input_slice_times_two_minus_a_constant(self):
    c = input_times_two_minus_three()
    want = x_values(c["inputs"][0]).astype(np.int32) * 2 - 3
    for key, (_, arr) in self.outputs(c, ("interpret", "lower", "ir")).items():
      with self.subTest(run=key):
        np.testing.assert_array_equal(arr, want)

  def test_int16_products_wrap(self):
    x = {"name": "x", "shape": [128], "dtype": "int16",
         "fill": {"pattern": "arange", "start": 0, "step": 1}}
    c = vcase("wrap", {"name": "o", "shape": [128], "dtype": "int16"},
              {"mul": [{"load": {"input": "x"}}, {"const": 1000}]}, inputs=[x], cluster=0)
    k = np.arange(128, dtype=np.int64) * 1000
    want = (((k + 2 ** 15) % 2 ** 16) - 2 ** 15).astype(np.int16)  # two's complement wrap
    self.assertEqual(int(want[100]), 100000 - 2 ** 17)
    for key, (_, arr) in self.outputs(c).items():
      with self.subTest(run=key):
        np.testing.assert_array_equal(arr, want)

  def check_rounding(self, dtype):
    c, xs, p = rounding_case(dtype)
    ulp = 2.0 ** -p
    k = np.arange(128)
    # x + ulp/2 is halfway between x and x + ulp: to nearest even keeps x for even k
    want_sum = np.where(k % 2 == 0, np.asarray(xs), np.asarray(xs) + ulp)
    cp, _, _ = rounding_product_case(dtype)
    # (1 + k u)^2 exactly in float64, then one rounding to the dtype (nearest even)
    exact = (1 + k * ulp) ** 2
    want_prod = exact.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)
    self.assertTrue(any(float(w) != e for w, e in zip(want_prod, exact)))  # rounding matters
    for key, (_, arr) in self.outputs(c).items():
      with self.subTest(run=key, value="sum"):
        np.testing.assert_array_equal(arr[0].astype(np.float64), want_sum)
    for key, (_, arr) in self.outputs(cp).items():
      with self.subTest(run=key, value="product"):
        np.testing.assert_array_equal(arr[1].astype(np.float64),
                                      want_prod.astype(np.float64))

  def test_float16_rounds_to_nearest_even(self):
    self.check_rounding("float16")

  def test_bfloat16_rounds_to_nearest_even(self):
    self.check_rounding("bfloat16")


class LoweringErrorTest(unittest.TestCase):
  """What the compiler's lowering refuses (both releases alike): 64 elements, 8-bit arithmetic."""

  def diag(self, case, semantics):
    case["target"].update(semantics=semantics, profile="mosaic")
    out = executor("lower").run(case)
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    d = out["diagnostic"]
    return d["stage"], d["exception"], d["message"]

  def test_64_elements(self):
    c = vcase("n64", {"name": "o", "shape": [64], "dtype": "int32"}, {"const": 1}, cluster=0)
    self.assertEqual(self.diag(c, "lane"), (
        "lower", "ValueError",
        "memref<64xi32> must have a number of elements that is a multiple of 128 (got 64)"))
    self.assertEqual(self.diag(c, "warpgroup"), (
        "dialect", "NotImplementedError", "Arrays with the splat layout can only be stored when "
        "they have a single element or a multiple of 128 elements"))
    out = executor("interpret").run(vcase("n64", {"name": "o", "shape": [64], "dtype": "int32"},
                                          {"const": 1}, cluster=0))
    self.assertEqual(out["kind"], "completed", out)  # interpret mode has no such limit

  def test_8_bit_arithmetic(self):
    x = {"name": "x", "shape": [128], "dtype": "int8"}
    c = vcase("i8", {"name": "o", "shape": [128], "dtype": "int8"},
              {"add": [{"load": {"input": "x"}}, {"const": 1}]}, inputs=[x], cluster=0)
    msg = ("Pointwise operations on 8-bit types are unsupported (except bitwise operations). "
           "Upcast to a 16- or 32-bit type before performing the operation.")
    self.assertEqual(self.diag(c, "lane"), ("lower", "NotImplementedError", msg))
    self.assertEqual(self.diag(c, "warpgroup"), ("dialect", "NotImplementedError", msg))


class ReproTest(unittest.TestCase):

  def generate(self, case, expected=None):
    return cfjax_repro.generate({
        "case": case, "mode": "interpret",
        "expected": expected or {"kind": "completed", "outputs": []}, "match": "exact",
        "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})

  def test_the_store_line(self):
    src = self.generate(input_times_two_minus_three())
    lines = [ln.strip() for ln in src.splitlines() if "[...] =" in ln]
    ds = "pl.ds(lax.axis_index('x') * 128, 128)"
    self.assertEqual(lines, [
        f"o.at[{ds},][...] = (x.at[{ds},][...] * jnp.full((128,), 2, jnp.int32)) - "
        "jnp.full((128,), 3, jnp.int32)  # $.program[0]"])
    src = self.generate(smem_plus_one())
    self.assertIn("o[...] = buf[...] + jnp.full((128,), 1, jnp.int32)  # $.program[0].body[2]",
                  src)

  def test_script_runs_and_asserts_the_outputs(self):
    c = smem_plus_one()
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = self.generate(c, out)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("1 output(s) hold the predicted values", run.stdout)


class ImportTest(unittest.TestCase):

  KERNEL = VECTOR_STORE_KERNEL

  def import_value(self, expr):
    return import_source(self.KERNEL % expr)

  def store(self, case):
    (scope,) = case["program"]
    return scope["body"][-1]

  def test_a_count_that_is_no_multiple_of_128(self):
    # JAX's compiler refuses it (lower.vector.strided_elements, dialect.vector.layout_inference);
    # the import keeps it as written, for the reference to predict that.
    c = import_source(VECTOR_STORE_KERNEL.replace("(128,)", "(64,)").replace("arange(128", "arange(64")
                      % "smem[...] + 1")
    self.assertEqual(c["outputs"][0]["shape"], [64])
    self.assertEqual(self.store(c)["value"], {"add": [{"load": {"alloc": "smem"}}, {"const": 1}]})

  def test_smem_plus_one(self):
    c = self.import_value("smem[...] + 1")
    (x,), (o,) = c["inputs"], c["outputs"]
    self.assertEqual(self.store(c), {
        "op": "vector_store", "dst": {"output": o["name"]},
        "value": {"add": [{"load": {"alloc": "smem"}}, {"const": 1}]}})
    _ = x

  def test_constants_inputs_and_a_value_used_twice(self):
    c = self.import_value("(lambda v: v * v - jnp.full((128,), 2, jnp.int32) + "
                          "jnp.ones_like(v) * x_ref[...] + jnp.zeros_like(v))(smem[...])")
    x = c["inputs"][0]["name"]
    sm = {"load": {"alloc": "smem"}}
    self.assertEqual(self.store(c)["value"], {"add": [{"add": [
        {"sub": [{"mul": [sm, sm]}, {"const": 2}]},
        {"mul": [{"const": 1}, {"load": {"input": x}}]}]}, {"const": 0}]})

  def test_what_stays_refused(self):
    for expr, what in (
        ("jnp.exp(smem[...].astype(jnp.float32)).astype(jnp.int32)", "`exp`"),
        ("o_ref[...] + 1", "a load (`get`) of the output"),
        ("jnp.abs(smem[...])", "`abs`"),  # jnp.maximum: {"max": ...} (test_vector_minmax)
        # astype: {"convert": ...} (test_vector_convert), but not to a dtype no case holds
        ("smem[...].astype(jnp.float8_e4m3fn).astype(jnp.int32)",
         "`convert_element_type` from int32 to float8_e4m3fn")):
      with self.subTest(expr=expr):
        with self.assertRaises(Exception) as cm:
          self.import_value(expr)
        msg = str(cm.exception)
        self.assertRegex(msg, r"k\.py:12: a vector store of a value the importer does not "
                         r"follow: it comes from ")
        self.assertIn(what, msg)

  def test_round_trip(self):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    for c in (smem_plus_one(), input_times_two_minus_three(), ones_halves(),
              rounding_product_case("bfloat16")[0]):
      with self.subTest(case=c["name"]):
        src = cfjax_repro.generate({"case": c, "mode": "interpret",
                                    "expected": {"kind": "completed", "outputs": []}})
        got = import_source(src)
        a, b = import_roundtrip.canonical(c), import_roundtrip.canonical(got)
        for arr in a["inputs"] + b["inputs"]:
          arr.pop("fill", None)  # a values fill's 1.0 comes back as 1 (the tool's, not ours)
        self.assertIsNone(import_roundtrip.first_difference(a, b))


if __name__ == "__main__":
  unittest.main()
