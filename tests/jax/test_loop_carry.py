"""Loop-carried values (docs/case-format.md "Loop-carried values": a loop's `carry` {"name",
"dtype", "shape", "init", "next"} and the vector value {"carry": NAME}) through the Python side:
the case helpers (cfjax_case), the translation run in interpret mode (jax-interpret), the
compiler's lowering (jax-lower: Lane's layout check of `mgpu.fori`, a one-trip loop unrolled,
Warpgroup's layout inference) and the lowered module evaluated on the CPU (jax-ir: scf.for's
iter_args), the repro script (cfjax_repro_body) and `collfuzz import` (cfjax_import_control).

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_loop_carry.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_loop_carry.py'

Expected outputs are computed here with numpy from the inputs' fills, never copied from a run.
"""

import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import (executor, import_source, run_script, store_lines,  # noqa: E402
                               typed_output)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402

# The message JAX 0.11.2 and 0.12.0.1 raise where Lane's `mgpu.fori` compares the layout of what
# a trip returns (strided: the loaded `next`) with the carry's (a splat: the constant `init`).
SPLAT_VS_STRIDED = (
    "(PyTreeDef([CustomNode(FragmentedArray[(WGStridedFragLayout(shape=(256,), vec_size=2), "
    "(1,), None)], [*])]), PyTreeDef([CustomNode(FragmentedArray[(WGSplatFragLayout("
    "shape=(256,)), (), None)], [*])]))")


def acc_case(trips=4, semantics="lane", profile="interpret"):
  """o = sum over i < trips of x.at[i], x: float32[4, 256]: a loop carrying acc (init 0, next
  acc + x.at[i][...]) and a store of its result after it."""
  return {
      "format": 1, "name": "loop_carry_acc", "mesh": {},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [4, 256], "dtype": "float32"}],
      "outputs": [{"name": "o", "shape": [256], "dtype": "float32"}],
      "program": [
          {"op": "loop", "trip_count": trips, "index": "i",
           "carry": {"name": "acc", "dtype": "float32", "shape": [256], "init": {"const": 0},
                     "next": {"add": [{"carry": "acc"},
                                      {"load": {"input": "x", "index": [{"loop": "i"}]}}]}},
           "body": []},
          {"op": "vector_store", "dst": {"output": "o"}, "value": {"carry": "acc"}}]}


def tiles_case(semantics="warpgroup", profile="interpret"):
  """The case format's example, with SMEM tiles: x (float32[4, 256]) copied into `tiles`; a loop
  carrying acc (init 1, next acc + tiles.at[i][...]) whose body stores the trip's incoming acc to
  p.at[i]; a second loop carrying b (init: acc's result, next b * 2, no index); o = acc * 2 inside
  a `when` after the loops, q = b."""
  return {
      "format": 1, "name": "loop_carry_tiles", "mesh": {},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [4, 256], "dtype": "float32"}],
      "outputs": [{"name": "o", "shape": [256], "dtype": "float32"},
                  {"name": "p", "shape": [4, 256], "dtype": "float32"},
                  {"name": "q", "shape": [256], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "tiles", "kind": "smem", "shape": [4, 256], "dtype": "float32"},
          {"name": "bar", "kind": "barrier", "num_barriers": 1}], "body": [
          {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "tiles"},
           "barrier": {"alloc": "bar", "index": 0}},
          {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
          {"op": "loop", "trip_count": 4, "index": "i",
           "carry": {"name": "acc", "dtype": "float32", "shape": [256], "init": {"const": 1},
                     "next": {"add": [{"carry": "acc"},
                                      {"load": {"alloc": "tiles", "index": [{"loop": "i"}]}}]}},
           "body": [{"op": "vector_store", "dst": {"output": "p", "index": [{"loop": "i"}]},
                     "value": {"carry": "acc"}}]},
          {"op": "loop", "trip_count": 2,
           "carry": {"name": "b", "dtype": "float32", "shape": [256], "init": {"carry": "acc"},
                     "next": {"mul": [{"carry": "b"}, {"const": 2}]}},
           "body": []},
          {"op": "when", "cond": True, "body": [
              {"op": "vector_store", "dst": {"output": "o"},
               "value": {"mul": [{"carry": "acc"}, {"const": 2}]}}]},
          {"op": "vector_store", "dst": {"output": "q"}, "value": {"carry": "b"}}]}]}


def x_values():
  return cfjax_fill.fill_array({"shape": [4, 256], "dtype": "float32"}).astype(np.float64)


def run(case, mode, semantics=None):
  c = copy.deepcopy(case)
  if semantics is not None:
    c["target"]["semantics"] = semantics
  if mode != "interpret":
    c["target"]["profile"] = "mosaic"
  return c, executor(mode).run(c)


class CaseTest(unittest.TestCase):
  """cfjax_case reads the carry: its key, its checks, the ranges, the grid axes."""

  def test_written_ranges_and_walk(self):
    c = cfjax_case.Case.from_json(tiles_case())
    self.assertEqual(cfjax_case.written_ranges(c), {"o": [[0, 256]], "p": [[0, 1024]],
                                                    "q": [[0, 256]]})
    self.assertEqual([op["op"] for _, op, _ in c.walk()][2:5], ["barrier_wait", "loop",
                                                                "vector_store"])

  def test_the_carry_object_is_checked(self):
    self.assertIsNone(cfjax_case.loop_carry({"op": "loop"}))
    good = acc_case()["program"][0]
    self.assertIs(cfjax_case.loop_carry(good, "$.program[0]"), good["carry"])
    for change, field in (({"name": "a b"}, "carry.name"), ({"shape": [0]}, "carry.shape"),
                          ({"shape": 256}, "carry.shape"), ({"dtype": 1}, "carry.dtype"),
                          ({"extra": 1}, "carry")):
      op = copy.deepcopy(good)
      op["carry"].update(change)
      with self.subTest(change=change):
        with self.assertRaisesRegex(cfjax_case.CaseError, rf"^\$\.program\[0\]\.{field}:"):
          cfjax_case.loop_carry(op, "$.program[0]")
    self.assertEqual(cfjax_case.carry_key("acc"), ("carry", "acc"))
    self.assertNotEqual(cfjax_case.carry_key("i"), cfjax_case.loop_key("i"))

  def test_a_carry_name_is_no_grid_axis(self):
    c = acc_case()
    c["mesh"] = {"grid": [2], "grid_names": ["acc"]}
    self.assertTrue(cfjax_case.grid_reducible(c))
    c["program"][0]["carry"]["init"] = {"load": {"input": "x", "index": [{"axis": "acc"}]}}
    self.assertFalse(cfjax_case.grid_reducible(c))  # an axis read in `init` is seen


class InterpretTest(unittest.TestCase):
  """Interpret mode (and jax-ir under Warpgroup) accumulate over the trips."""

  def test_the_accumulated_sum(self):
    want = x_values().sum(axis=0)
    for mode, sem in (("interpret", "lane"), ("interpret", "warpgroup"), ("ir", "warpgroup")):
      c, out = run(acc_case(), mode, sem)
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(typed_output(out, c["outputs"][0]), want)
        self.assertEqual(out["outputs"][0]["written"], [[0, 256]])

  def test_the_carry_in_the_body_and_after_the_loop(self):
    x = x_values()
    acc = 1 + np.concatenate([np.zeros((1, 256)), np.cumsum(x, axis=0)])  # acc before trip i
    want = [acc[4] * 2, acc[:4], acc[4] * 4]  # o, p, q
    for mode, sem in (("interpret", "lane"), ("interpret", "warpgroup"), ("ir", "warpgroup")):
      c, out = run(tiles_case(), mode, sem)
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        for k, w in enumerate(want):
          np.testing.assert_array_equal(typed_output(out, c["outputs"][k], k), w)

  def test_what_the_translation_refuses(self):
    cases = []
    c = acc_case()
    c["program"][0]["carry"]["init"] = {"carry": "acc"}  # init may not read the carry it starts
    cases.append((c, "$.program[0].carry.init.carry: no loop around this value"))
    c = acc_case()
    c["program"][1]["value"] = {"carry": "other"}
    cases.append((c, "$.program[1].value.carry: no loop around this value"))
    c = acc_case()
    c["program"][0]["carry"]["next"] = {"convert": {"from": "int32", "value": {"carry": "acc"}}}
    cases.append((c, "$.program[0].carry.next.convert.value.carry: the carry 'acc' is "
                  "float32[256], here int32[256] is read"))
    c = acc_case()
    c["program"][0]["carry"].update(shape=[2, 128], next={"carry": "acc"})
    cases.append((c, "$.program[1].value.carry: the carry 'acc' is float32[2, 128], here "
                  "float32[256] is read"))
    c = acc_case()
    c["program"][0]["carry"]["dtype"] = "floaty"
    cases.append((c, "$.program[0].carry.dtype: unknown dtype 'floaty'"))
    for c, msg in cases:
      _, out = run(c, "interpret")
      with self.subTest(msg=msg):
        self.assertEqual(out["kind"], "crash", json.dumps(out)[:2000])
        self.assertIn(msg, json.dumps(out))


class LowerTest(unittest.TestCase):
  """jax-lower: Lane compares the layouts of `init` and `next` (rule lower.loop.carry_layout)
  where the loop is a scf.for; a one-trip loop is unrolled; Warpgroup infers one layout."""

  def test_lane_splat_init_and_loaded_next(self):
    for trips in (2, 4):
      for mode in ("lower", "ir"):
        _, out = run(acc_case(trips), mode, "lane")
        with self.subTest(trips=trips, mode=mode):
          self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
          d = out["diagnostic"]
          self.assertEqual((d["stage"], d["exception"]), ("lower", "ValueError"))
          self.assertTrue(d["message"].startswith(
              "(PyTreeDef([CustomNode(FragmentedArray[(WGStridedFragLayout"), d["message"])
          self.assertEqual(d["message"], SPLAT_VS_STRIDED)

  def test_one_trip_and_warpgroup_lower(self):
    for trips, sem in ((1, "lane"), (4, "warpgroup")):
      _, out = run(acc_case(trips), "lower", sem)
      with self.subTest(trips=trips, semantics=sem):
        self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
        self.assertIn("lowered for CUDA without an error", out["reason"])
    c, out = run(acc_case(1), "ir", "lane")
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, c["outputs"][0]), x_values()[0])


class ReproTest(unittest.TestCase):
  """cfjax_repro_body writes `def tripN(i, acc): ... return NEXT` and `acc = lax.fori_loop(...)`."""

  def script(self, case, expected=None):
    return cfjax_repro.generate({
        "case": case, "mode": "interpret",
        "expected": expected or {"kind": "completed", "outputs": []}, "match": "exact",
        "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})

  def test_the_loop_lines(self):
    src = self.script(tiles_case())
    body = src[src.index("  def trip0"):src.index("  pl.run_scoped(scope0")]
    self.assertEqual([ln.strip() for ln in body.splitlines()], [
        "def trip0(i, acc):  # $.program[0].body[2]",
        "p.at[i,][...] = acc  # $.program[0].body[2].body[0]",
        "return acc + tiles.at[i][...]  # $.program[0].body[2].carry.next",
        "acc = lax.fori_loop(0, 4, trip0, jnp.full((256,), 1.0, jnp.float32))  "
        "# $.program[0].body[2].carry.init",
        "def trip1(_, b):  # $.program[0].body[3]",
        "return b * jnp.full((256,), 2.0, jnp.float32)  # $.program[0].body[3].carry.next",
        "b = lax.fori_loop(0, 2, trip1, acc)  # $.program[0].body[3].carry.init",
        "@pl.when(True)  # $.program[0].body[4]",
        "def _():",
        "o[...] = acc * jnp.full((256,), 2.0, jnp.float32)  # $.program[0].body[4].body[0]",
        "q[...] = b  # $.program[0].body[5]"])

  def test_names_that_would_shadow(self):
    for name, spelt in (("acc", "acc"), ("x", "carry_x"), ("carry", "carry_carry"),
                        ("i", "carry_i"), ("trip0", "carry_trip0"), ("_", "carry__"),
                        ("jax", "v_jax"), ("main", "v_main")):
      c = json.loads(json.dumps(acc_case()).replace('"acc"', json.dumps(name)))
      src = self.script(c)
      compile(src, "t.py", "exec")
      with self.subTest(name=name):
        self.assertIn(f"def trip0(i, {spelt}):", src)
        self.assertIn(f"return {spelt} + x.at[i,][...]", src)
        self.assertIn(f"{spelt} = lax.fori_loop(0, 4, trip0, jnp.full((256,), 0.0, "
                      "jnp.float32))", src)
        self.assertEqual(store_lines(c), [f"o[...] = {spelt}  # $.program[1]"])
    c = acc_case()
    c["program"][0]["index"] = "acc"  # an index named as the carry: the carry's spelling moves
    c["program"][0]["carry"]["next"]["add"][1]["load"]["index"] = [{"loop": "acc"}]
    self.assertIn("def trip0(acc, carry_acc):", self.script(c))
    c = acc_case()
    c["program"][1]["value"] = {"carry": "other"}
    with self.assertRaisesRegex(cfjax_repro.Unsupported, r"\$\.program\[1\]\.value\.carry: no "
                                "loop around this value"):
      self.script(c)

  def test_the_script_runs_and_asserts_the_outputs(self):
    for case in (acc_case(), tiles_case()):
      out = executor("interpret").run(case)
      self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
      proc = run_script(self.script(case, out))
      with self.subTest(case=case["name"]):
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-4000:])
        n = len(case["outputs"])
        self.assertIn(f"{n} output(s) hold the predicted values", proc.stdout)

  def test_the_lane_script_raises_what_jax_lower_raises(self):
    c = acc_case(profile="mosaic")
    src = cfjax_repro.generate({
        "case": c, "mode": "lower", "match": "exact",
        "expected": {"kind": "rejected", "diagnostic": {
            "stage": "lower", "exception": "ValueError", "message": SPLAT_VS_STRIDED}},
        "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})
    proc = run_script(src)
    self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-4000:])


KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, o_ref):
%s

  kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((256,), jnp.float32))
  return kernel, [jnp.ones((4, 256), jnp.float32)]
'''


def kernel(*lines):
  return KERNEL % "\n".join("    " + ln for ln in lines)


class ImportTest(unittest.TestCase):
  """`collfuzz import` reads a fori_loop carrying one array into a loop's `carry`."""

  def test_an_accumulator(self):
    c = import_source(kernel(
        "def loop_body(i, total):",
        "  o_ref[...] = total",
        "  return total + x_ref.at[i][...]",
        "total = lax.fori_loop(0, 4, loop_body, jnp.zeros((256,), jnp.float32))",
        "o_ref[...] = total * 2"))
    (x,), (o,) = c["inputs"], c["outputs"]
    self.assertEqual(c["program"], [
        {"op": "loop", "trip_count": 4, "index": "i",
         "carry": {"name": "total", "dtype": "float32", "shape": [256], "init": {"const": 0},
                   "next": {"add": [{"carry": "total"},
                                    {"load": {"input": x["name"], "index": [{"loop": "i"}]}}]}},
         "body": [{"op": "vector_store", "dst": {"output": o["name"]},
                   "value": {"carry": "total"}}]},
        {"op": "vector_store", "dst": {"output": o["name"]},
         "value": {"mul": [{"carry": "total"}, {"const": 2}]}}])

  def test_names_a_lower_bound_and_a_loop_of_the_carry_alone(self):
    c = import_source(kernel(
        "a = lax.fori_loop(1, 3, lambda i, v: v + 1.0, jnp.ones((256,), jnp.float32))",
        "b = lax.fori_loop(0, 2, lambda i, in0: in0 * a, a)",  # in0: the input's case name
        "c = lax.fori_loop(0, 2, lambda i, v: v - b, b)",
        "o_ref[...] = c"))
    loop_ops = [op for op in c["program"] if op["op"] == "loop"]
    self.assertEqual([(op["trip_count"], "index" in op, op["carry"]["name"]) for op in loop_ops],
                     [(2, False, "v"), (2, False, "acc"), (2, False, "acc1")])
    self.assertEqual(loop_ops[0]["carry"]["init"], {"const": 1})
    self.assertEqual(loop_ops[1]["carry"], {
        "name": "acc", "dtype": "float32", "shape": [256], "init": {"carry": "v"},
        "next": {"mul": [{"carry": "acc"}, {"carry": "v"}]}})
    self.assertEqual(loop_ops[2]["carry"]["next"], {"sub": [{"carry": "acc1"}, {"carry": "acc"}]})
    self.assertEqual(c["program"][-1]["value"], {"carry": "acc1"})

  def test_the_repro_script_comes_back(self):
    c = import_source(ReproTest().script(tiles_case()))
    (scope,) = c["program"]
    loop_ops = [op for op in scope["body"] if op["op"] == "loop"]
    want = [op for op in tiles_case()["program"][0]["body"] if op["op"] == "loop"]
    for op in want:  # the import's names: in0 for x, out1 for p
      op["carry"]["init"] = json.loads(json.dumps(op["carry"]["init"]).replace('"x"', '"in0"'))
    want[0]["body"][0]["dst"]["output"] = "out1"
    self.assertEqual(loop_ops, want)
    self.assertEqual(scope["body"][-2:], [
        {"op": "vector_store", "dst": {"output": "out0"},
         "value": {"mul": [{"carry": "acc"}, {"const": 2}]}},
        {"op": "vector_store", "dst": {"output": "out2"}, "value": {"carry": "b"}}])

  def test_what_stays_refused(self):
    for lines, words in (
        (["a, b = lax.fori_loop(0, 4, lambda i, c: (c[0] + x_ref.at[i][...], c[1] * 2.0), "
          "(jnp.zeros((256,), jnp.float32), jnp.ones((256,), jnp.float32)))",
          "o_ref[...] = a + b"],
         "a value of a lax.fori_loop that carries float32[256], float32[256] besides its index "
         "(a case's loop carries at most one array, of rank 1 or more, besides its index)"),
        (["s = lax.fori_loop(0, 4, lambda i, c: c + 1.0, 0.0)",
          "o_ref[...] = jnp.full((256,), s, jnp.float32)"],
         "a value of a lax.fori_loop that carries float32[] besides its index"),
        (["t = lax.fori_loop(0, 4, lambda i, c: c + 1.0, jnp.zeros((100,), jnp.float32))",
          "o_ref.at[pl.ds(0, 100)][...] = t"],
         "a lax.fori_loop carrying float32[100]: a loop's carry holds a multiple of 128 "
         "elements"),
        (["o_ref[...] = lax.fori_loop(0, 4, lambda i, c: jnp.exp(c), "
          "jnp.zeros((256,), jnp.float32))"],
         "a lax.fori_loop whose body returns for its carried float32[256] a value the importer "
         "does not follow: it comes from `exp`")):
      with self.subTest(lines=lines):
        with self.assertRaises(Exception) as e:
          import_source(kernel(*lines))
        self.assertIn(words, str(e.exception))


if __name__ == "__main__":
  unittest.main()
