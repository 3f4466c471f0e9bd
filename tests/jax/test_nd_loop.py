"""`plgpu.nd_loop` (docs/case-format.md "nd_loop": {"op": "nd_loop", "grid", "collective_axes",
"tiling", "index", "local_index", "carry", "body"}) through the Python side: the steps each thread
takes and the ranges its stores write (cfjax_case), the translation run in interpret mode
(jax-interpret) and its lowering evaluated on the CPU (jax-ir: scf.for with a dynamic upper
bound), JAX's own tiling errors, the repro script (cfjax_repro_body), `collfuzz import`
(cfjax_import_ndloop) and the round trip of the two (tools/import_roundtrip.py).

    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax/bin/python -m unittest tests/jax/test_nd_loop.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_nd_loop.py

Expected outputs and steps are written out here by hand (or with numpy from the fills), never
copied from a run. Calls the modules directly; CliTest runs build/release/collfuzz (skipped while
the binary does not parse nd_loop).
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import (executor, import_file, import_source, output_array,  # noqa: E402
                               round_trip_difference, run_script)

import cfjax_case  # noqa: E402
import cfjax_import  # noqa: E402
import cfjax_repro  # noqa: E402

COLLFUZZ = os.environ.get("COLLFUZZ_BIN", os.path.join(ROOT, "build", "release", "collfuzz"))
KERNEL_FILE = os.path.join(ROOT, "corpus", "kernels", "py", "nd_loop_tiles.py")


def tile(name, size):
  return {"start": {"loop": name, "mul": size}, "size": size}


def tiles_case(grid=(2, 3), tiling=None, profile="interpret", semantics="lane"):
  """The corpus kernel nd_loop_tiles.py as a case: nd_loop(grid, "x") over a cluster of
  2; step (m, n) copies x tile (m, n) (8x32 f32) into SMEM on a barrier, waits, stores it to the
  same place of y. y == x."""
  op = {"op": "nd_loop", "grid": list(grid), "collective_axes": "x", "index": ["m", "n"],
        "body": [
            {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [tile("m", 8),
                                                                         tile("n", 32)]},
             "dst": {"alloc": "smem"}, "barrier": {"alloc": "bar", "index": 0}},
            {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
            {"op": "copy_smem_to_gmem", "src": {"alloc": "smem"},
             "dst": {"output": "y", "index": [tile("m", 8), tile("n", 32)]}}]}
  if tiling is not None:
    op["tiling"] = list(tiling)
  shape = [grid[0] * 8, grid[1] * 32]
  return {
      "format": 1, "name": "nd_tiles", "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "profile": profile, "semantics": semantics},
      "inputs": [{"name": "x", "shape": shape, "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 0, "step": 1}}],
      "outputs": [{"name": "y", "shape": shape, "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "smem", "kind": "smem", "shape": [8, 32], "dtype": "float32"},
          {"name": "bar", "kind": "barrier", "num_arrivals": 1}], "body": [op]}]}


def slots_case(profile="interpret", semantics="lane"):
  """nd_loop((5,), "x") over 2 CTAs, double-buffered on the local index t: trip t copies x rows
  8m..8m+7 into smem.at[t % 2] on bars.at[t % 2], waits, stores them to y.at[axis_index("x"), t].
  CTA 0 takes steps 0, 2, 4 (3 trips), CTA 1 steps 1, 3 (2 trips): y[1, 2] is never written."""
  slot = {"loop": "t", "mod": 2}
  return {
      "format": 1, "name": "nd_slots", "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "profile": profile, "semantics": semantics},
      "inputs": [{"name": "x", "shape": [40, 32], "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 1, "step": 1}}],
      "outputs": [{"name": "y", "shape": [2, 3, 8, 32], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "smem", "kind": "smem", "shape": [2, 8, 32], "dtype": "float32"},
          {"name": "bars", "kind": "barrier", "num_arrivals": 1, "num_barriers": 2}],
          "body": [{"op": "nd_loop", "grid": [5], "collective_axes": "x", "index": ["m"],
                    "local_index": "t", "body": [
                        {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [tile("m", 8)]},
                         "dst": {"alloc": "smem", "index": [slot]},
                         "barrier": {"alloc": "bars", "index": slot}},
                        {"op": "barrier_wait", "barrier": {"alloc": "bars", "index": slot}},
                        {"op": "copy_smem_to_gmem", "src": {"alloc": "smem", "index": [slot]},
                         "dst": {"output": "y", "index": [{"axis": "x"}, {"loop": "t"}]}}]}]}]}


def carry_case(profile="interpret", semantics="warpgroup"):
  """nd_loop((6,), "x") carrying acc (f32[128], init 0, next acc + x.at[m]) over 2 CTAs, then
  y.at[axis_index("x")] = acc: y[0] = x[0] + x[2] + x[4], y[1] = x[1] + x[3] + x[5]."""
  return {
      "format": 1, "name": "nd_carry", "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "profile": profile, "semantics": semantics},
      "inputs": [{"name": "x", "shape": [6, 128], "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 0, "step": 1}}],
      "outputs": [{"name": "y", "shape": [2, 128], "dtype": "float32"}],
      "program": [
          {"op": "nd_loop", "grid": [6], "collective_axes": "x", "index": ["m"],
           "carry": {"name": "acc", "dtype": "float32", "shape": [128], "init": {"const": 0},
                     "next": {"add": [{"carry": "acc"},
                                      {"load": {"input": "x", "index": [{"loop": "m"}]}}]}},
           "body": []},
          {"op": "vector_store", "dst": {"output": "y", "index": [{"axis": "x"}]},
           "value": {"carry": "acc"}}]}


def thread_case(profile="interpret", semantics="lane"):
  """nd_loop((3,), ["wg"]) over 2 warpgroups: y.at[axis_index("wg"), t] = x.at[m]; thread 0
  takes rows 0 and 2, thread 1 row 1 (y[1, 1] never written)."""
  return {
      "format": 1, "name": "nd_thread", "mesh": {"num_threads": 2, "thread_name": "wg"},
      "target": {"arch": "sm_90a", "profile": profile, "semantics": semantics},
      "inputs": [{"name": "x", "shape": [3, 128], "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 1, "step": 1}}],
      "outputs": [{"name": "y", "shape": [2, 2, 128], "dtype": "float32"}],
      "program": [{"op": "nd_loop", "grid": [3], "collective_axes": ["wg"], "index": ["m"],
                   "local_index": "t", "body": [
                       {"op": "vector_store",
                        "dst": {"output": "y", "index": [{"axis": "wg"}, {"loop": "t"}]},
                        "value": {"load": {"input": "x", "index": [{"loop": "m"}]}}}]}]}


def nd_op(case):
  """The case's first nd_loop op."""
  def find(ops):
    for op in ops:
      if op["op"] == "nd_loop":
        return op
      found = find(op.get("body", []))
      if found is not None:
        return found
    return None
  return find(case["program"])


X = np.arange(16 * 96, dtype=np.float32).reshape(16, 96)


class StepsTest(unittest.TestCase):
  """cfjax_case.nd_loop_steps and written_ranges: nd_loop's helpers.py arithmetic by hand."""

  def steps(self, op, mesh, axes):
    return cfjax_case.nd_loop_steps(op, cfjax_case.Mesh.from_json(mesh), axes)

  def test_grid_dealt_out_over_a_cluster_axis(self):
    op = {"grid": [2, 3], "collective_axes": "x"}
    mesh = {"cluster": [2], "cluster_names": ["x"]}
    self.assertEqual(self.steps(op, mesh, {"x": 0}), [(0, (0, 0)), (1, (0, 2)), (2, (1, 1))])
    self.assertEqual(self.steps(op, mesh, {"x": 1}), [(0, (0, 1)), (1, (1, 0)), (2, (1, 2))])
    # helpers.py's docstring: grid (2, 3) over an axis of 4; axis index 2 gets (0, 2) only.
    mesh4 = {"cluster": [4], "cluster_names": ["x"]}
    self.assertEqual(self.steps(op, mesh4, {"x": 2}), [(0, (0, 2))])
    self.assertEqual(self.steps(op, mesh4, {"x": 0}), [(0, (0, 0)), (1, (1, 1))])

  def test_tiling_and_tuple_axes(self):
    # grid (2, 4), tiling (1, 2): unravelled over (2, 2, 1, 2), index = sub + tile * tiling.
    op = {"grid": [2, 4], "collective_axes": ["x", "y"], "tiling": [1, 2]}
    mesh = {"cluster": [2, 2], "cluster_names": ["x", "y"]}
    # a = x * 2 + y: CTA (1, 0) is a = 2, steps 2 and 6: (0, 0, 0, 0)->... by hand:
    # step 2 -> digits (0, 1, 0, 0) -> (0 + 0, 0 + 1 * 2) = (0, 2); step 6 -> (1, 1, 0, 0) -> (1, 2)
    self.assertEqual(self.steps(op, mesh, {"x": 1, "y": 0}), [(0, (0, 2)), (1, (1, 2))])
    # step 1 -> (0, 0, 0, 1) -> (0, 1); step 5 -> (1, 0, 0, 1) -> (1, 1)
    self.assertEqual(self.steps(op, mesh, {"x": 0, "y": 1}), [(0, (0, 1)), (1, (1, 1))])
    bad = dict(op, tiling=[1, 3])  # JAX raises at trace: no trip, nothing written
    self.assertEqual(self.steps(bad, mesh, {"x": 0, "y": 0}), [])

  def test_written_ranges_take_each_threads_trips(self):
    c = cfjax_case.Case.from_json(slots_case())
    # CTA 0 writes y[0, 0..2] (768 elements), CTA 1 y[1, 0..1]; y[1, 2] is not written.
    self.assertEqual(cfjax_case.written_ranges(c), {"y": [[0, 1280]]})
    t = cfjax_case.Case.from_json(thread_case())
    self.assertEqual(cfjax_case.written_ranges(t), {"y": [[0, 384]]})

  def test_loop_names_are_no_grid_axes(self):
    c = tiles_case()
    c["mesh"].update(grid=[8], grid_names=["m"])
    self.assertTrue(cfjax_case.grid_reducible(c))
    nd_op(c)["local_index"] = "n2"
    c["mesh"]["grid_names"] = ["n2"]
    self.assertTrue(cfjax_case.grid_reducible(c))
    nd_op(c)["collective_axes"] = "n2"
    self.assertFalse(cfjax_case.grid_reducible(c))


class TranslateTest(unittest.TestCase):
  """cfjax_translate emits plgpu.nd_loop: each CTA moves its own tiles, JAX counts the trips."""

  def check_tiles(self, out, trips):
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(output_array(out, X.shape), X)
    self.assertEqual(out["outputs"][0]["written"], [[0, X.size]])
    for cta, n in zip(out["ctas"], trips):
      self.assertEqual([(w["barrier"], w["phase"]) for w in cta["waits"]],
                       [("bar[0]", k) for k in range(n)], cta["rank"])

  def test_interpret(self):
    self.check_tiles(executor("interpret").run(tiles_case()), [3, 3])

  def test_ir(self):
    """jax-ir: scf.for whose upper bound is div + extui(cmpi) of the block's cluster index."""
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        self.check_tiles(executor("ir").run(tiles_case(profile="mosaic", semantics=sem)), [3, 3])

  def test_uneven_trips_and_slots(self):
    x = np.arange(1, 40 * 32 + 1, dtype=np.float32).reshape(5, 8, 32)
    for mode, sem in (("interpret", "lane"), ("ir", "lane"), ("ir", "warpgroup")):
      out = executor(mode).run(slots_case("interpret" if mode == "interpret" else "mosaic", sem))
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        y = output_array(out, (2, 3, 8, 32))
        for cta, steps in ((0, (0, 2, 4)), (1, (1, 3))):
          for t, m in enumerate(steps):
            np.testing.assert_array_equal(y[cta, t], x[m], err_msg=f"y[{cta}, {t}]")
        self.assertEqual(out["outputs"][0]["written"], [[0, 1280]])
        waits = [[(w["barrier"], w["phase"]) for w in c["waits"]] for c in out["ctas"]]
        self.assertEqual(waits, [[("bars[0]", 0), ("bars[1]", 0), ("bars[0]", 1)],
                                 [("bars[0]", 0), ("bars[1]", 0)]])

  def test_tiling(self):
    c = tiles_case(grid=(2, 4), tiling=(1, 2))
    x = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(output_array(out, x.shape), x)

  def test_carry(self):
    x = np.arange(6 * 128, dtype=np.float32).reshape(6, 128)
    want = np.stack([x[0] + x[2] + x[4], x[1] + x[3] + x[5]])
    for mode, sem in (("interpret", "warpgroup"), ("ir", "warpgroup")):
      out = executor(mode).run(carry_case("interpret" if mode == "interpret" else "mosaic", sem))
      with self.subTest(mode=mode):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(output_array(out, (2, 128)), want)

  def test_carry_layouts_under_lane(self):
    """Lane's mgpu.fori compares the trees of `next` (strided) and `init` (a splat): the nd_loop
    is a dynamic loop, never unrolled."""
    out = executor("ir").run(carry_case("mosaic", "lane"))
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"]), ("lower", "ValueError"))
    self.assertEqual(d["message"], (
        "(PyTreeDef([CustomNode(FragmentedArray[(WGStridedFragLayout(shape=(128,), vec_size=1), "
        "(1,), None)], [*])]), PyTreeDef([CustomNode(FragmentedArray[(WGSplatFragLayout("
        "shape=(128,)), (), None)], [*])]))"))

  def test_thread_axis(self):
    x = np.arange(1, 3 * 128 + 1, dtype=np.float32).reshape(3, 128)
    for mode, sem in (("interpret", "lane"), ("ir", "lane"), ("ir", "warpgroup")):
      out = executor(mode).run(thread_case("interpret" if mode == "interpret" else "mosaic", sem))
      with self.subTest(mode=mode, semantics=sem):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        y = output_array(out, (2, 2, 128))
        np.testing.assert_array_equal(y[0], x[[0, 2]])
        np.testing.assert_array_equal(y[1, 0], x[1])
        self.assertFalse(np.array_equal(y[1, 1], x[0]), "thread 1 ran a second trip")
        self.assertEqual(out["outputs"][0]["written"], [[0, 384]])

  def test_tiling_errors_are_jaxs(self):
    for tiling, grid, msg in (
        ((1,), (2, 4), "tiling=(1,) and grid=(2, 4) must have same length."),
        ((1, 3), (2, 4), "Tiling (1, 3) does not divide grid (2, 4).")):
      c = tiles_case(grid=grid, tiling=tiling)
      out = executor("interpret").run(c)
      with self.subTest(tiling=tiling):
        self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
        d = out["diagnostic"]
        self.assertEqual((d["stage"], d["exception"], d["message"]), ("trace", "ValueError", msg))
        self.assertEqual(d["op"], "$.program[0].body[0]")


def script(case, expected):
  return cfjax_repro.generate({"case": case, "mode": "interpret", "expected": expected,
                               "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
                               "command": "collfuzz repro t.json"})


class ReproTest(unittest.TestCase):
  """cfjax_repro_body writes the decorator form; the script runs standalone and can fail."""

  def test_script_text_and_run(self):
    c = tiles_case(grid=(2, 4), tiling=(1, 2))
    x = np.arange(16 * 128, dtype=np.float32)
    out = {"kind": "completed", "outputs": [{"name": "y", "hex": x.tobytes().hex(),
                                             "written": [[0, x.size]]}]}
    src = script(c, out)
    self.assertIn("    @plgpu.nd_loop((2, 4), collective_axes='x', tiling=(1, 2))  "
                  "# $.program[0].body[0]\n    def nd0(loop_info):\n"
                  "      m, n = loop_info.index\n", src)
    self.assertIn("x.at[pl.ds(m * 8, 8), pl.ds(n * 32, 32)]", src)
    p = run_script(src)
    self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
    self.assertIn("as predicted", p.stdout)
    bad = copy.deepcopy(out)
    y = x.copy()
    y[5 * 128 + 40] += 1  # y[5, 40]
    bad["outputs"][0]["hex"] = y.tobytes().hex()
    p = run_script(script(c, bad))
    self.assertNotEqual(p.returncode, 0, p.stdout[-2000:])
    self.assertIn("y[5, 40]", p.stdout + p.stderr)

  def test_carry_local_index_and_tuple_axes(self):
    exp = {"kind": "completed", "outputs": []}
    src = script(carry_case(), exp)
    self.assertIn("  def nd0(loop_info, carry):  # $.program[0]\n    acc = carry\n"
                  "    m, = loop_info.index\n    return acc + x.at[m,][...]  "
                  "# $.program[0].carry.next\n  acc = plgpu.nd_loop((6,), collective_axes='x', "
                  "init_carry=jnp.full((128,), 0.0, jnp.float32))(nd0)  "
                  "# $.program[0].carry.init\n", src)
    src = script(thread_case(), exp)
    self.assertIn("@plgpu.nd_loop((3,), collective_axes=('wg',))", src)
    self.assertIn("    m, = loop_info.index\n    t = loop_info.local_index\n", src)
    c = slots_case()
    nd_op(c)["index"] = [None]
    nd_op(c)["body"][0]["src"]["index"] = [0]
    src = script(c, exp)
    self.assertNotIn("loop_info.index", src)
    self.assertIn("smem.at[t % 2]", src)

  def test_carry_script_runs(self):
    x = np.arange(6 * 128, dtype=np.float32).reshape(6, 128)
    want = np.stack([x[0] + x[2] + x[4], x[1] + x[3] + x[5]])
    out = {"kind": "completed", "outputs": [{"name": "y", "hex": want.tobytes().hex(),
                                             "written": [[0, want.size]]}]}
    p = run_script(script(carry_case(), out))
    self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
    self.assertIn("as predicted", p.stdout)

  def test_tiling_error_script(self):
    out = {"kind": "rejected", "diagnostic": {
        "stage": "trace", "exception": "ValueError",
        "message": "Tiling (1, 3) does not divide grid (2, 4)."}}
    p = run_script(script(tiles_case(grid=(2, 4), tiling=(1, 3)), out))
    self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
    out["diagnostic"]["message"] = "Tiling (1, 2) does not divide grid (2, 4)."
    p = run_script(script(tiles_case(grid=(2, 4), tiling=(1, 3)), out))
    self.assertNotEqual(p.returncode, 0, p.stdout[-2000:])

  def test_names_that_would_shadow(self):
    exp = {"kind": "completed", "outputs": []}
    c = tiles_case()
    c["inputs"][0]["name"] = "loop_info"
    nd_op(c)["body"][0]["src"]["input"] = "loop_info"
    nd_op(c)["index"] = ["nd0", "loop_info"]
    for e in nd_op(c)["body"][0]["src"]["index"] + nd_op(c)["body"][2]["dst"]["index"]:
      e["start"]["loop"] = {"m": "nd0", "n": "loop_info"}[e["start"]["loop"]]
    src = script(c, exp)
    compile(src, "t.py", "exec")
    self.assertIn("def nd0(loop_info_):\n      loop_nd0, loop_loop_info = loop_info_.index\n",
                  src)
    self.assertIn("loop_info.at[pl.ds(loop_nd0 * 8, 8), pl.ds(loop_loop_info * 32, 32)]", src)


KERNEL_HEAD = """\
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


"""


def kernel_src(loop_lines, mesh="cluster=(2,), cluster_names=('x',)", x_rows=24):
  """A kernel whose body (x_ref, y_ref, smem f32[8, 32], bar) runs `loop_lines`."""
  return KERNEL_HEAD + (
      "def collfuzz_case():\n"
      "  def body(x_ref, y_ref, smem, bar):\n"
      + "".join(f"    {line}\n" for line in loop_lines) +
      "  kernel = plgpu.kernel(\n"
      f"      body, out_type=jax.ShapeDtypeStruct(({x_rows}, 32), jnp.float32),\n"
      "      scratch_types=[plgpu.SMEM((8, 32), jnp.float32), plgpu.Barrier(num_barriers=2)],\n"
      f"      {mesh})\n"
      f"  return kernel, [jnp.arange({x_rows} * 32, dtype=jnp.float32).reshape({x_rows}, 32)]\n")


COPY_M = ["  plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(m * 8, 8)], smem, bar.at[0])",
          "  plgpu.barrier_wait(bar.at[0])"]


class ImportTest(unittest.TestCase):
  """`collfuzz import` reads nd_loop's while back into an nd_loop op."""

  def test_corpus_kernel(self):
    case = import_file(KERNEL_FILE)
    op = nd_op(case)
    self.assertEqual({k: v for k, v in op.items() if k != "body"},
                     {"op": "nd_loop", "grid": [2, 3], "collective_axes": "x",
                      "index": ["m0", "m1"]})
    copy_in, wait, store = op["body"]
    self.assertEqual(copy_in["src"]["index"], [tile("m0", 8), tile("m1", 32)])
    self.assertEqual(wait["op"], "barrier_wait")
    self.assertEqual(store["dst"]["index"], [tile("m0", 8), tile("m1", 32)])
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(output_array(out, X.shape), X)

  def test_tiling_local_index_and_carry(self):
    case = import_source(kernel_src([
        "@plgpu.nd_loop((2, 4), collective_axes='x', tiling=(1, 2))",
        "def _(loop_info):",
        "  m, n = loop_info.index",
        "  t = loop_info.local_index",
        "  plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(n * 8, 8)], smem, bar.at[t % 2])",
        "  plgpu.barrier_wait(bar.at[t % 2])"], x_rows=32))
    op = nd_op(case)
    self.assertEqual((op["grid"], op["tiling"], op["index"], op["local_index"]),
                     ([2, 4], [1, 2], [None, "m1"], "t"))
    self.assertEqual(op["body"][0]["barrier"], {"alloc": "bar", "index": {"loop": "t", "mod": 2}})
    src = KERNEL_HEAD + textwrap.dedent("""\
        def collfuzz_case():
          def body(x_ref, y_ref):
            def step(loop_info, carry):
              m, = loop_info.index
              return carry + x_ref.at[m][...]
            acc = plgpu.nd_loop((6,), collective_axes="x",
                                init_carry=jnp.zeros((128,), jnp.float32))(step)
            y_ref.at[lax.axis_index("x")][...] = acc
          k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((2, 128), jnp.float32),
                           cluster=(2,), cluster_names=("x",))
          return k, [jnp.arange(6 * 128, dtype=jnp.float32).reshape(6, 128)]
        """)
    case = import_source(src)
    op, store = case["program"]
    self.assertEqual(op["carry"], {
        "name": "acc", "dtype": "float32", "shape": [128], "init": {"const": 0},
        "next": {"add": [{"carry": "acc"}, {"load": {"input": case["inputs"][0]["name"],
                                                     "index": [{"loop": "m0"}]}}]}})
    self.assertEqual(store["value"], {"carry": "acc"})

  def test_a_users_sum_stays_untiled(self):
    """`n + m * 4` on an untiled (2, 4) grid is the trace of a (8,) grid tiled (4,) too: JAX's
    traceback says it is the user's."""
    case = import_source(kernel_src([
        "@plgpu.nd_loop((2, 4), collective_axes='x')",
        "def _(loop_info):",
        "  m, n = loop_info.index",
        "  f = n + m * 4",
        "  plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(f * 8, 8)], smem, bar.at[0])"], x_rows=64))
    op = nd_op(case)
    self.assertEqual((op["grid"], op.get("tiling"), op["index"]), ([2, 4], None, ["m0", "m1"]))
    self.assertEqual(op["body"][0]["src"]["index"][0]["start"],
                     {"loop": "m1", "mul": 8, "plus": [{"loop": "m0", "mul": 32}]})

  def test_tuple_and_thread_axes(self):
    loop = ["@plgpu.nd_loop((3, 4), collective_axes=('y', 'x'))", "def _(loop_info):",
            "  m, n = loop_info.index", *COPY_M]
    case = import_source(kernel_src(loop, "cluster=(2, 2), cluster_names=('x', 'y')"))
    self.assertEqual(nd_op(case)["collective_axes"], ["y", "x"])
    loop[0] = "@plgpu.nd_loop((3,), collective_axes='wg')"
    loop[2] = "  m, = loop_info.index"
    case = import_source(kernel_src(loop, "num_threads=2, thread_name='wg'"))
    self.assertEqual((nd_op(case)["grid"], nd_op(case)["collective_axes"]), ([3], "wg"))

  def test_refusals(self):
    loop = ["@plgpu.nd_loop((3,), collective_axes='g')", "def _(loop_info):",
            "  m, = loop_info.index", *COPY_M]
    cases = [
        (kernel_src(loop, "grid=(2,), grid_names=('g',)"),
         r"k\.py:\d+: a plgpu.nd_loop whose collective axis 'g' is a grid axis \(a case's nd_loop "
         r"deals its steps out over cluster axes and the thread axis only\)"),
        (kernel_src(["g = lax.axis_index('x') + 3",
                     "@plgpu.nd_loop((g,), collective_axes='x')"] + loop[1:]),
         r"plgpu.nd_loop over a grid whose dims are not all static integers"),
        (kernel_src(["@plgpu.nd_loop((4,), collective_axes='x')", "def _(loop_info):",
                     "  m, = loop_info.index",
                     "  plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(m * 8, 8)], smem, bar.at[m % 2])"],
                    x_rows=32),
         r"a slot reads the loop's loop_info.local_index only"),
        (kernel_src(["def step(i, c):", "  m = i", *COPY_M, "  return c",
                     "lax.fori_loop(0, lax.axis_index('x') + 1, step, None)"]),
         r"unsupported primitive `while`: a loop whose trip count is not static"),
    ]
    for src, pattern in cases:
      with self.subTest(pattern=pattern):
        with self.assertRaisesRegex(cfjax_import.ImportRefused, pattern):
          import_source(src)

  def test_round_trip(self):
    """repro then import gives the case back (tools/import_roundtrip.py's canonical form)."""
    for case in (tiles_case(), tiles_case(grid=(2, 4), tiling=(1, 2)), slots_case(),
                 carry_case(), thread_case()):
      with self.subTest(case=case["name"], tiling=nd_op(case).get("tiling")):
        self.assertIsNone(round_trip_difference(case))

  def test_round_trip_comparison(self):
    """import_roundtrip's canonical form tells nd_loops apart by each field, names aside."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    base = slots_case()
    a = import_roundtrip.canonical(base)
    renamed = copy.deepcopy(base)
    text = json.dumps(renamed).replace('"m"', '"mm"').replace('"t"', '"tt"')
    self.assertIsNone(import_roundtrip.first_difference(a, import_roundtrip.canonical(
        json.loads(text))))
    one = copy.deepcopy(base)
    nd_op(one)["collective_axes"] = ["x"]  # "x" and ("x",) are one axis to JAX
    self.assertIsNone(import_roundtrip.first_difference(a, import_roundtrip.canonical(one)))
    for field, value in (("grid", [6]), ("collective_axes", "y"), ("tiling", [5]),
                         ("index", [None]), ("local_index", None)):
      b = copy.deepcopy(base)
      nd_op(b)[field] = value
      with self.subTest(field=field):
        self.assertIsNotNone(import_roundtrip.first_difference(a, import_roundtrip.canonical(b)))


@unittest.skipUnless(os.path.exists(COLLFUZZ), "needs build/release/collfuzz")
class CliTest(unittest.TestCase):
  """`collfuzz run --executors jax-ir,jax-interpret` on the cases; skipped while the binary cannot
  parse nd_loop."""

  def test_run_through_the_cli(self):
    with tempfile.TemporaryDirectory() as d:
      paths = []
      for k, c in enumerate((tiles_case(profile="mosaic"), slots_case(profile="mosaic"))):
        paths.append(os.path.join(d, f"c{k}.json"))
        with open(paths[-1], "w", encoding="utf-8") as f:
          json.dump(c, f)
      run = subprocess.run([COLLFUZZ, "run", *paths, "--executors", "jax-ir", "--json",
                            "--python", sys.executable, "--jax", metadata.version("jax")],
                           capture_output=True, text=True, cwd=ROOT, timeout=500, check=False)
    if run.returncode == 2:
      self.skipTest(f"{COLLFUZZ} does not parse nd_loop yet: {run.stderr.strip()[:300]}")
    self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
    got = json.loads(run.stdout)
    self.assertEqual(len(got), 2)
    for entry in got:
      (ex,) = entry["executors"]
      self.assertEqual(ex["outcome"]["kind"], "completed", json.dumps(ex)[:3000])


if __name__ == "__main__":
  unittest.main()
