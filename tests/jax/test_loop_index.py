"""Loops with an index (docs/case-format.md "loop": `"index": NAME`, `{"loop": NAME, "mul", "add"}`
index entries, dynamic slice starts in copy_smem_to_gmem's destination) through the Python side:
the translation and its runs (cfjax_translate, jax-interpret and jax-ir), the written ranges
(cfjax_case), the repro script (cfjax_repro_body) and `collfuzz import` (cfjax_import_control,
_index, _values).

    .venv-jax/bin/python -m unittest discover -s tests/jax
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax

Calls the modules directly (no build/release/collfuzz).
"""

import copy
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402
sys.path.insert(0, HERE)
from loop_case_support import executor, import_file, loops, output_array  # noqa: E402,F401

import cfjax_case  # noqa: E402
import cfjax_repro  # noqa: E402

KERNEL_FILE = os.path.join(ROOT, "corpus", "kernels", "py", "fori_loop_multicast_tiles.py")
X = np.arange(48 * 32, dtype=np.float32).reshape(48, 32)


def tiles_case(index="i", trips=3):
  """The corpus kernel fori_loop_multicast_tiles.py as a case: trip i multicasts x tile i
  (x.at[pl.ds(i * 16, 16)]) into SMEM, waits, stores it to y.at[axis_index("cluster"),
  pl.ds(i * 16, 16)], and ends on a cluster barrier (the SMEM tile is reused across trips)."""
  tile = {"start": {"loop": index, "mul": 16}, "size": 16}
  return {
      "format": 1, "name": "fori_tiles", "mesh": {"cluster": [2], "cluster_names": ["cluster"]},
      "target": {"arch": "sm_90a", "profile": "interpret"},
      "inputs": [{"name": "x", "shape": [48, 32], "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 0, "step": 1}}],
      "outputs": [{"name": "y", "shape": [2, 48, 32], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "smem", "kind": "smem", "shape": [16, 32], "dtype": "float32"},
          {"name": "bar", "kind": "barrier", "num_arrivals": 1},
          {"name": "done", "kind": "cluster_barrier", "collective_axes": ["cluster"]}],
          "body": [{"op": "loop", "trip_count": trips, "index": index, "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [tile]},
               "dst": {"alloc": "smem"}, "barrier": {"alloc": "bar", "index": 0},
               "collective_axes": ["cluster"]},
              {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
              {"op": "copy_smem_to_gmem", "src": {"alloc": "smem"},
               "dst": {"output": "y", "index": [{"axis": "cluster"}, tile]}},
              {"op": "barrier_arrive", "barrier": {"alloc": "done", "index": 0}},
              {"op": "barrier_wait", "barrier": {"alloc": "done", "index": 0}}]}]}],
  }




class CaseWalkTest(unittest.TestCase):
  """cfjax_case: the ranges a loop's stores write, and grid axes against loop names."""

  def test_written_ranges_cover_every_trip(self):
    c = cfjax_case.Case.from_json(tiles_case())
    self.assertEqual(cfjax_case.written_ranges(c), {"y": [[0, 2 * 48 * 32]]})
    two = tiles_case(trips=2)  # trips 0 and 1: rows 0..31 of each CTA's y
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(two)),
                     {"y": [[0, 1024], [1536, 2560]]})
    # add: the tiles start one row later
    two["program"][0]["body"][0]["body"][2]["dst"]["index"][1]["start"]["add"] = 1
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(two)),
                     {"y": [[32, 1056], [1568, 2592]]})

  def test_dynamic_slice_start_in_a_store(self):
    self.assertEqual(cfjax_case.slice_ranges([128], [{"start": {"axis": "c", "mul": 64},
                                                      "size": 64}], {"c": 1}), [(64, 128)])
    self.assertEqual(cfjax_case.slice_ranges([8, 4], [{"loop": "k", "add": 2}],
                                             {("loop", "k"): 3}), [(20, 24)])

  def test_a_loop_name_is_no_grid_axis(self):
    c = tiles_case()
    c["mesh"].update(grid=[8], grid_names=["i"])
    self.assertTrue(cfjax_case.grid_reducible(c))
    c["program"][0]["body"][0]["body"][0]["collective_axes"] = ["i"]
    self.assertFalse(cfjax_case.grid_reducible(c))


class TranslateTest(unittest.TestCase):
  """cfjax_translate passes the fori_loop's index to the body: each trip moves its own tile."""

  def check_tiles(self, out):
    self.assertEqual(out["kind"], "completed", out)
    y = output_array(out, (2, 48, 32))
    for cta in range(2):
      np.testing.assert_array_equal(y[cta], X, err_msg=f"y[{cta}]")
    self.assertEqual(out["outputs"][0]["written"], [[0, 3072]])
    for cta in out["ctas"]:
      waits = [(w["barrier"], w["phase"]) for w in cta["waits"]]
      self.assertEqual(waits, [("bar[0]", 0), ("done[0]", 0), ("bar[0]", 1), ("done[0]", 1),
                               ("bar[0]", 2), ("done[0]", 2)])

  def test_interpret(self):
    self.check_tiles(executor("interpret").run(tiles_case()))

  def test_ir(self):
    """jax-ir: the scf.for's induction variable feeds the TMA coordinates (muli, index_cast)."""
    self.check_tiles(executor("ir").run(tiles_case()))

  def test_a_loop_name_that_is_a_ref_name(self):
    """The index lives in env under a tuple key: a loop named like an array shadows nothing."""
    c = tiles_case(index="x")
    self.check_tiles(executor("interpret").run(c))


class ReproTest(unittest.TestCase):
  """cfjax_repro_body writes `def tripN(NAME, carry)` and NAME * m + a."""

  def script(self, case, expected):
    return cfjax_repro.generate({"case": case, "mode": "interpret", "expected": expected,
                                 "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
                                 "command": "collfuzz repro t.json"})

  def test_script_text_and_run(self):
    c = tiles_case()
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = self.script(c, out)
    self.assertIn("def trip0(i, carry):", src)
    self.assertIn("x.at[pl.ds(i * 16, 16),]", src)
    self.assertIn("y.at[lax.axis_index('cluster'), pl.ds(i * 16, 16)]", src)
    # The script asserts y; a y of other values makes it fail (it can fail).
    bad = copy.deepcopy(out)
    y = output_array(out, (2, 48, 32)).copy()
    y[1, 40, 0] += 1
    bad["outputs"][0]["hex"] = y.tobytes().hex()
    with tempfile.TemporaryDirectory() as d:
      for name, exp, rc in (("good.py", out, 0), ("bad.py", bad, None)):
        path = os.path.join(d, name)
        with open(path, "w", encoding="utf-8") as f:
          f.write(self.script(c, exp))
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=False)
        if rc == 0:
          self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
          self.assertIn("as predicted", p.stdout)
        else:
          self.assertNotEqual(p.returncode, 0, p.stdout[-2000:])
          self.assertIn("y[1, 40, 0]", p.stdout + p.stderr)

  def test_names_that_would_shadow(self):
    exp = {"kind": "completed", "outputs": []}
    for name, spelt in (("x", "loop_x"), ("carry", "loop_carry"), ("trip0", "loop_trip0"),
                        ("jax", "v_jax"), ("class", "v_class"), ("smem", "loop_smem"),
                        ("make_kernel", "v_make_5f_kernel"), ("normalize", "loop_normalize"),
                        ("k", "k")):
      src = self.script(tiles_case(index=name), exp)
      compile(src, "t.py", "exec")
      self.assertIn(f"def trip0({spelt}, carry):", src, name)
      self.assertIn(f"x.at[pl.ds({spelt} * 16, 16),]", src, name)
    c = tiles_case(index="i")
    del c["program"][0]["body"][0]["index"]
    with self.assertRaisesRegex(cfjax_repro.Unsupported, "no enclosing loop has the index 'i'"):
      self.script(c, exp)
    c = tiles_case(index="x")
    c["outputs"][0]["name"] = "loop_x"  # the fallback spelling is taken too
    c["program"][0]["body"][0]["body"][2]["dst"]["output"] = "loop_x"
    src = self.script(c, exp)
    self.assertIn("def trip0(loop_x_, carry):", src)
    self.assertIn("x.at[pl.ds(loop_x_ * 16, 16),]", src)
    self.assertIn("loop_x.at[lax.axis_index('cluster'), pl.ds(loop_x_ * 16, 16)]", src)


KERNEL_HEAD = """\
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


"""


class ImportTest(unittest.TestCase):
  """`collfuzz import` reads fori_loop's index: {"loop": NAME} entries and the loop's `index`."""

  def write(self, d, body):
    path = os.path.join(d, "k.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(KERNEL_HEAD + textwrap.dedent(body))
    return path

  def test_corpus_kernel(self):
    case = import_file(KERNEL_FILE)
    (loop,) = loops(case["program"])
    self.assertEqual(loop["index"], "i")
    self.assertEqual(loop["trip_count"], 3)
    copy_in, _, store = loop["body"][:3]
    self.assertEqual(copy_in["src"]["index"], [{"start": {"loop": "i", "mul": 16}, "size": 16}])
    self.assertEqual(store["dst"]["index"],
                     [{"axis": "cluster"}, {"start": {"loop": "i", "mul": 16}, "size": 16}])
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", out)
    y = output_array(out, (2, 48, 32))
    for cta in range(2):
      np.testing.assert_array_equal(y[cta], X)

  @staticmethod
  def loop_kernel(step_lines, lower=0, upper=3):
    """A kernel whose fori_loop(lower, upper) runs `step_lines` (x f32[64, 32], y f32[64, 32])."""
    return ("def collfuzz_case():\n"
            "  def body(x_ref, y_ref, smem, bar):\n"
            "    def step(i, carry):\n"
            + "".join(f"      {line}\n" for line in step_lines) +
            "      return carry\n"
            f"    lax.fori_loop({lower}, {upper}, step, None)\n"
            "  kernel = plgpu.kernel(\n"
            "      body, out_type=jax.ShapeDtypeStruct((64, 32), jnp.float32),\n"
            "      scratch_types=[plgpu.SMEM((16, 32), jnp.float32), plgpu.Barrier()])\n"
            "  return kernel, [jnp.arange(64 * 32, dtype=jnp.float32).reshape(64, 32)]\n")

  def test_lower_bound_and_arithmetic(self):
    step = ["plgpu.copy_gmem_to_smem(x_ref.at[pl.ds((i - 1) * 16, 16)], smem, bar)",
            "plgpu.barrier_wait(bar)",
            "plgpu.copy_smem_to_gmem(smem, y_ref.at[pl.ds(i * 16 + 8, 16)])",
            "plgpu.wait_smem_to_gmem(0)"]
    with tempfile.TemporaryDirectory() as d:
      case = import_file(self.write(d, self.loop_kernel(step, 1, 3)))
    (loop,) = loops(case["program"])
    self.assertEqual((loop["index"], loop["trip_count"]), ("i", 2))
    self.assertEqual(loop["body"][0]["src"]["index"],
                     [{"start": {"loop": "i", "mul": 16}, "size": 16}])
    self.assertEqual(loop["body"][2]["dst"]["index"],
                     [{"start": {"loop": "i", "mul": 16, "add": 24}, "size": 16}])
    # trip t stores x rows 16t..16t+15 to y rows 16t+24..: y[24:56] == x[0:32]
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", out)
    self.assertEqual(out["outputs"][0]["written"], [[24 * 32, 56 * 32]])
    y = output_array(out, (64, 32))
    np.testing.assert_array_equal(y[24:56], np.arange(64 * 32, dtype=np.float32)
                                  .reshape(64, 32)[0:32])

  def test_an_unused_index_is_not_written(self):
    step = ["plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(0, 16)], smem, bar)",
            "plgpu.barrier_wait(bar)"]
    with tempfile.TemporaryDirectory() as d:
      case = import_file(self.write(d, self.loop_kernel(step)))
    (loop,) = loops(case["program"])
    self.assertNotIn("index", loop)

  def test_a_condition_on_the_index_is_refused(self):
    import cfjax_import  # pylint: disable=import-outside-toplevel
    step = ["@pl.when(i == 0)",
            "def _():",
            "  plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(0, 16)], smem, bar)"]
    with tempfile.TemporaryDirectory() as d:
      path = self.write(d, self.loop_kernel(step))
      with self.assertRaisesRegex(cfjax_import.ImportRefused,
                                  r"k\.py:\d+: pl\.when of .*a lax\.fori_loop index.*"
                                  r"not a lax\.fori_loop index"):
        import_file(path)

  def test_store_to_a_dynamic_slice(self):
    body = """
        def collfuzz_case():
          def body(x_ref, y_ref, smem, bar):
            plgpu.copy_gmem_to_smem(x_ref, smem, bar)
            plgpu.barrier_wait(bar)
            plgpu.copy_smem_to_gmem(smem, y_ref.at[pl.ds(lax.axis_index("cluster") * 64, 64)])
            plgpu.wait_smem_to_gmem(0)
          kernel = plgpu.kernel(
              body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32),
              scratch_types=[plgpu.SMEM((64,), jnp.float32), plgpu.Barrier()],
              cluster=(2,), cluster_names=("cluster",))
          return kernel, [jnp.arange(64, dtype=jnp.float32)]
        """
    with tempfile.TemporaryDirectory() as d:
      case = import_file(self.write(d, body))
    store = case["program"][0]["body"][2]
    self.assertEqual(store["dst"]["index"],
                     [{"start": {"axis": "cluster", "mul": 64}, "size": 64}])
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", out)
    self.assertEqual(out["outputs"][0]["written"], [[0, 128]])
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(output_array(out, (128,)), np.concatenate([x, x]))


if __name__ == "__main__":
  unittest.main()
