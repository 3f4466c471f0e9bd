"""Pipeline slots: a loop index taken `% k` (`"mod": k` on a dynamic index object) as an SMEM ref's
first index (`buf.at[i % 2]`) and as a barrier's index (`bars.at[i % 2]`), through the Python side:
the case walk (cfjax_case), the translation and its runs (cfjax_translate, jax-interpret and
jax-ir), the repro script (cfjax_repro_body), `collfuzz import` (cfjax_import_index, _values,
_copies, _barriers, _control) and the round trip's canonical form (tools/import_roundtrip.py).

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
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numpy as np  # noqa: E402
sys.path.insert(0, HERE)
from loop_case_support import executor, import_file, import_source, loops, output_array  # noqa: E402,F401

import cfjax_case  # noqa: E402
import cfjax_repro  # noqa: E402
import import_roundtrip  # noqa: E402

KERNEL_FILE = os.path.join(ROOT, "corpus", "kernels", "py", "double_buffered_tiles.py")
X = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)


def slot(index="i", **kw):
  return {"loop": index, "mod": 2, **kw}


def double_buffered_case(index="i", bar_slot=None, smem_slot=None):
  """One CTA; trip i (of 4) loads x tile i into buf.at[i % 2] arriving on bars.at[i % 2], waits on
  that barrier and stores the slot to y tile i (corpus/kernels/py/double_buffered_tiles.py)."""
  bar_slot = slot(index) if bar_slot is None else bar_slot
  smem_slot = slot(index) if smem_slot is None else smem_slot
  tile = {"start": {"loop": index, "mul": 16}, "size": 16}
  bar = {"alloc": "bars", "index": bar_slot}
  return {
      "format": 1, "name": "double_buffered", "mesh": {},
      "target": {"arch": "sm_90a", "profile": "interpret"},
      "inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32",
                  "fill": {"pattern": "arange", "start": 0, "step": 1}}],
      "outputs": [{"name": "y", "shape": [64, 32], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "buf", "kind": "smem", "shape": [2, 16, 32], "dtype": "float32"},
          {"name": "bars", "kind": "barrier", "num_arrivals": 1, "num_barriers": 2}],
          "body": [{"op": "loop", "trip_count": 4, "index": index, "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [tile]},
               "dst": {"alloc": "buf", "index": [smem_slot]}, "barrier": bar},
              {"op": "barrier_wait", "barrier": copy.deepcopy(bar)},
              {"op": "copy_smem_to_gmem", "src": {"alloc": "buf", "index": [smem_slot]},
               "dst": {"output": "y", "index": [tile]}}]}]}],
  }




class CaseTest(unittest.TestCase):
  """cfjax_case: mod is lax.rem (truncated toward zero), slots resolve per trip."""

  def test_mod_and_slots(self):
    axes = {cfjax_case.loop_key("i"): 3}
    self.assertEqual(cfjax_case.dynamic_value({"loop": "i", "mod": 2}, axes), 1)
    self.assertEqual(cfjax_case.dynamic_value({"loop": "i", "mul": 3, "add": 1, "mod": 4},
                                              axes), 2)
    self.assertEqual(cfjax_case.dynamic_value({"loop": "i", "add": -5, "mod": 4}, axes), -2)
    self.assertEqual(cfjax_case.dynamic_value({"axis": "c", "mod": 2}, {"c": 3}), 1)
    self.assertEqual([cfjax_case.slot_value(slot(), {cfjax_case.loop_key("i"): t})
                      for t in range(4)], [0, 1, 0, 1])
    self.assertEqual(cfjax_case.slot_value(1, {}), 1)
    with self.assertRaises(cfjax_case.CaseError):
      cfjax_case.dynamic_value({"loop": "i", "mod": 0}, axes)
    # a mod on a GMEM entry: trip t stores row t % 2
    self.assertEqual(cfjax_case.slice_ranges([4, 8], [{"loop": "i", "mod": 2}], axes), [(8, 16)])

  def test_written_ranges(self):
    c = cfjax_case.Case.from_json(double_buffered_case())
    self.assertEqual(cfjax_case.written_ranges(c), {"y": [[0, 64 * 32]]})


class TranslateTest(unittest.TestCase):
  """cfjax_translate: buf.at[i % 2] and bars.at[i % 2] with the fori_loop's index."""

  def check(self, out):
    self.assertEqual(out["kind"], "completed", out)
    np.testing.assert_array_equal(output_array(out, (64, 32)), X)
    self.assertEqual(out["outputs"][0]["written"], [[0, 64 * 32]])
    (cta,) = out["ctas"]
    bars = sorted((b["alloc"], b["index"], b["phases"]) for b in cta["barriers"])
    self.assertEqual(bars, [("bars", 0, 2), ("bars", 1, 2)])
    waits = [(w["barrier"], w["phase"], w["completed"]) for w in cta["waits"]]
    self.assertEqual(waits, [("bars[0]", 0, True), ("bars[1]", 0, True), ("bars[0]", 1, True),
                             ("bars[1]", 1, True)])

  def test_interpret(self):
    self.check(executor("interpret").run(double_buffered_case()))

  def test_ir(self):
    """jax-ir: the slot is arith.remsi of the scf.for's induction variable, feeding the SMEM
    subview and the barrier's address."""
    self.check(executor("ir").run(double_buffered_case()))

  def test_a_shifted_slot(self):
    """(i + 1) % 2: trip 0 uses bars[1], so the waits alternate starting at bars[1]."""
    c = double_buffered_case(bar_slot=slot(add=1), smem_slot=slot(add=1))
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    np.testing.assert_array_equal(output_array(out, (64, 32)), X)
    waits = [(w["barrier"], w["phase"]) for w in out["ctas"][0]["waits"]]
    self.assertEqual(waits, [("bars[1]", 0), ("bars[0]", 0), ("bars[1]", 1), ("bars[0]", 1)])

  def test_mod_on_a_gmem_start(self):
    """y f32[32, 32] at pl.ds((i * 16) % 32, 16): trips 2 and 3 overwrite trips 0 and 1."""
    c = double_buffered_case()
    c["outputs"][0]["shape"] = [32, 32]
    store = c["program"][0]["body"][0]["body"][2]
    store["dst"]["index"] = [{"start": {"loop": "i", "mul": 16, "mod": 32}, "size": 16}]
    for mode in ("interpret", "ir"):
      out = executor(mode).run(c)
      self.assertEqual(out["kind"], "completed", out)
      np.testing.assert_array_equal(output_array(out, (32, 32)), X[32:], err_msg=mode)
    src = ReproTest.script(c, {"kind": "completed", "outputs": []})
    self.assertIn("y.at[pl.ds((i * 16) % 32, 16),]", src)

  def test_an_axis_slot_is_refused(self):
    c = double_buffered_case(bar_slot={"axis": "x", "mod": 2})
    out = executor("interpret").run(c)
    self.assertNotEqual(out["kind"], "completed")
    self.assertIn("loop slot", str(out))


class ReproTest(unittest.TestCase):
  """cfjax_repro_body writes buf.at[i % 2] and bars.at[i % 2]."""

  @staticmethod
  def script(case, expected):
    return cfjax_repro.generate({"case": case, "mode": "interpret", "expected": expected,
                                 "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
                                 "command": "collfuzz repro t.json"})

  def test_script_text_and_run(self):
    c = double_buffered_case()
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = self.script(c, out)
    self.assertIn("buf.at[i % 2]", src)
    self.assertIn("bars.at[i % 2]", src)
    self.assertIn("plgpu.barrier_wait(bars.at[i % 2])", src)
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "good.py")
      with open(path, "w", encoding="utf-8") as f:
        f.write(src)
      p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=False)
      self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
      self.assertIn("as predicted", p.stdout)

  def test_spellings(self):
    exp = {"kind": "completed", "outputs": []}
    src = self.script(double_buffered_case(bar_slot=slot(mul=3, add=1)), exp)
    self.assertIn("bars.at[(i * 3 + 1) % 2]", src)
    src = self.script(double_buffered_case(bar_slot=slot(add=-1)), exp)
    self.assertIn("bars.at[lax.rem(i + -1, 2)]", src)  # Python's % would floor
    compile(src, "t.py", "exec")


KERNEL_HEAD = """\
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


"""


def slot_kernel(slot_src, bar_src=None, cluster=False):
  """The double-buffered kernel with `slot = <slot_src>` (and the barrier indexed by bar_src)."""
  mesh = ", cluster=(2,), cluster_names=('cluster',)" if cluster else ""
  return KERNEL_HEAD + textwrap.dedent(f"""\
      def collfuzz_case():
        def body(x_ref, y_ref, buf, bars):
          def step(i, carry):
            slot = {slot_src}
            bar = bars.at[{bar_src or "slot"}]
            plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(i * 16, 16)], buf.at[slot], bar)
            plgpu.barrier_wait(bar)
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(buf.at[slot], y_ref.at[pl.ds(i * 16, 16)])
            plgpu.wait_smem_to_gmem(0)
            return carry
          lax.fori_loop(0, 4, step, None)
        kernel = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((64, 32), jnp.float32),
            scratch_types=[plgpu.SMEM((2, 16, 32), jnp.float32),
                           plgpu.Barrier(num_barriers=2)]{mesh})
        return kernel, [jnp.arange(64 * 32, dtype=jnp.float32).reshape(64, 32)]
      """)


class ImportTest(unittest.TestCase):
  """`collfuzz import` reads `i % 2` / lax.rem(i, 2) into slot objects and the loop's index."""

  def import_src(self, src):
    return import_source(src)

  def refused(self, src, pattern):
    import cfjax_import  # pylint: disable=import-outside-toplevel
    with self.assertRaisesRegex(cfjax_import.ImportRefused, pattern):
      self.import_src(src)

  @staticmethod
  def slots(case):
    (loop,) = loops(case["program"])
    load, wait, store = loop["body"]
    return loop, [load["dst"]["index"], load["barrier"]["index"], wait["barrier"]["index"],
                  store["src"]["index"]]

  def test_corpus_kernel(self):
    case = import_file(KERNEL_FILE)
    loop, slots = self.slots(case)
    self.assertEqual((loop["index"], loop["trip_count"]), ("i", 4))
    s = {"loop": "i", "mod": 2}
    self.assertEqual(slots, [[s], s, s, [s]])
    self.assertEqual(loop["body"][0]["src"]["index"],
                     [{"start": {"loop": "i", "mul": 16}, "size": 16}])
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", out)
    np.testing.assert_array_equal(output_array(out, (64, 32)), X)

  def test_shifted_slot(self):
    s = {"loop": "i", "add": 1, "mod": 2}
    for src in ("(i + 1) % 2", "lax.rem(i + 1, 2)", "lax.rem(i + 1, jnp.int32(2))"):
      _, slots = self.slots(self.import_src(slot_kernel(src)))
      self.assertEqual(slots, [[s], s, s, [s]], src)
    _, slots = self.slots(self.import_src(slot_kernel("(i * 3 + 1) % 4")))
    self.assertEqual(slots[1], {"loop": "i", "mul": 3, "add": 1, "mod": 4})

  def test_round_trip(self):
    """case -> repro script -> import gives the case back (tools/import_roundtrip's canonical)."""
    for bar_slot in (slot("k"), slot("k", mul=3, add=1), slot("k", add=-1)):
      c = double_buffered_case(index="k", bar_slot=bar_slot)
      src = ReproTest.script(c, {"kind": "completed", "outputs": []})
      got = self.import_src(src)
      canon = import_roundtrip.canonical(c)
      self.assertEqual(canon["program"][0]["body"][0]["body"][1]["barrier"]["index"],
                       {**bar_slot, "loop": "l0"})
      d = import_roundtrip.first_difference(canon, import_roundtrip.canonical(got))
      self.assertIsNone(d, bar_slot)

  def test_refusals(self):
    self.refused(slot_kernel("lax.rem(lax.axis_index('cluster'), 2)", cluster=True),
                 r"k\.py:\d+: .*`lax\.rem` of a lax\.axis_index expression .*made of a "
                 r"lax\.fori_loop index.* at \S*k\.py:\d+")
    self.refused(slot_kernel("lax.axis_index('cluster')", cluster=True),
                 r"k\.py:\d+: .*indexed with lax\.axis_index")
    self.refused(slot_kernel("i % 2", bar_src="lax.axis_index('cluster')", cluster=True),
                 r"k\.py:\d+: .*barrier `bars` indexed with .*lax\.fori_loop slot")
    self.refused(slot_kernel("(i % 2) * 1 + 1"),
                 r"k\.py:\d+: .*no arithmetic after the `%`")
    self.refused(slot_kernel("lax.rem(i % 4, 2)"),
                 r"k\.py:\d+: .*`lax\.rem` of a lax\.fori_loop slot .*one `% k`")
    self.refused(slot_kernel("(i - 1) % 2"),
                 r"k\.py:\d+: .*may be negative .*write lax\.rem")


if __name__ == "__main__":
  unittest.main()
