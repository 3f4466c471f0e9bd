"""SMEM transforms (tiling, swizzle) and SMEM slices through `collfuzz import`
(cfjax_import_allocs, _index, _kernel) and `collfuzz repro` (cfjax_repro_body), the round trip's
canonical form (tools/import_roundtrip.py), and the command line.

    .venv-jax/bin/python -m unittest tests/jax/test_smem_transforms_import.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_smem_transforms_import.py

JAX's PallasCallTest.test_tma_load_multicast (smem_transforms_support.KERNEL_SRC) imports to the
case written by hand (multicast_case). Calls the modules directly; CliTest alone runs
build/release/collfuzz (COLLFUZZ_BIN overrides), skipped without it or where it cannot parse
`transforms` yet.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numpy as np  # noqa: E402

from loop_case_support import executor, import_file  # noqa: E402
from smem_transforms_support import (COMBOS, T128, kernel_src, multicast_case,  # noqa: E402
                                     small_case, x_array)

import cfjax_repro  # noqa: E402
import cfjax_repro_body  # noqa: E402
import import_roundtrip  # noqa: E402

COLLFUZZ = os.environ.get("COLLFUZZ_BIN", os.path.join(ROOT, "build", "release", "collfuzz"))

HEAD = """\
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax._src.pallas.mosaic_gpu import core as gpu_core

T = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


"""


def scoped_src(smem, store, transforms="T", shape=(32, 64), load="smem"):
  """A cluster of 2 (axis x): run_scoped of SMEM `smem` (its shape) with `transforms`; x (of
  `shape`) copied into `load`, then `store` (a statement) after the wait."""
  return (HEAD +
          "def collfuzz_case():\n"
          "  def body(x, o):\n"
          "    def scope(smem, bar):\n"
          f"      plgpu.copy_gmem_to_smem(x, {load}, bar)\n"
          "      plgpu.barrier_wait(bar)\n"
          f"      {store}\n"
          f"    pl.run_scoped(scope, plgpu.SMEM({smem}, jnp.float16, transforms={transforms}),"
          " plgpu.Barrier())\n"
          f"  k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct({shape}, jnp.float16),\n"
          "                   cluster=(2,), cluster_names=('x',))\n"
          f"  return k, [jnp.zeros({shape}, jnp.float16)]\n")


def write(d, name, text):
  path = os.path.join(d, name)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return path


def import_src(src):
  with tempfile.TemporaryDirectory() as d:
    return import_file(write(d, "k.py", src))


def canon(case):
  return import_roundtrip.canonical(case)


def run_script(src):
  with tempfile.TemporaryDirectory() as d:
    path = write(d, "t.py", src)
    return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=False)


def generate(case, expected, mode="interpret"):
  return cfjax_repro.generate({"case": case, "mode": mode, "expected": expected,
                               "match": "exact", "collfuzz": "collfuzz test",
                               "jax": metadata.version("jax"), "command": "collfuzz repro t.json"})


class ImportTest(unittest.TestCase):
  """`collfuzz import` of transformed SMEM allocations and of SMEM slices."""

  def refused(self, src, pattern):
    import cfjax_import  # pylint: disable=import-outside-toplevel
    with self.assertRaisesRegex(cfjax_import.ImportRefused, pattern):
      import_src(src)

  def test_the_jax_test(self):
    """test_tma_load_multicast as the test writes it: scratch_types' transformed SMEM, the
    `pl.ds(8 * collective_idx, 8)` slice of it (a sum over the collective axes), read in logical
    coordinates."""
    for combo in COMBOS:
      with self.subTest(combo=combo):
        got = import_src(kernel_src(*combo))
        self.assertEqual(canon(got), canon(multicast_case(*combo)),
                         import_roundtrip.first_difference(canon(got),
                                                           canon(multicast_case(*combo))))
        smem = got["program"][0]["allocs"][0]
        # (collective size * 8, 64): 32 rows for each of these combinations
        self.assertEqual((smem["shape"], smem["transforms"]), ([32, 64], T128))

  def test_run_scoped_slices(self):
    for store, entry in (
        ("plgpu.copy_smem_to_gmem(smem.at[pl.ds(8, 8)], o.at[pl.ds(8, 8)])",
         {"start": 8, "size": 8}),
        ("plgpu.copy_smem_to_gmem(smem.at[pl.ds(lax.axis_index('x') * 16 + 8, 8)], "
         "o.at[pl.ds(0, 8)])", {"start": {"axis": "x", "mul": 16, "add": 8}, "size": 8}),
        ("plgpu.copy_smem_to_gmem(smem.at[pl.ds(0, 32)], o)", None)):  # the whole dim: no index
      with self.subTest(store=store):
        got = import_src(scoped_src("(32, 64)", store))
        scope = got["program"][0]
        self.assertEqual(scope["allocs"][0]["transforms"], T128)
        st = scope["body"][-1]
        self.assertEqual(st["op"], "copy_smem_to_gmem")
        self.assertEqual(st["src"].get("index"), None if entry is None else [entry])

  def test_leading_index_and_slice_on_both_sides(self):
    got = import_src(scoped_src(
        "(2, 32, 64)", "plgpu.copy_smem_to_gmem(smem.at[1, pl.ds(lax.axis_index('x') * 8, 8)], "
        "o.at[pl.ds(0, 8)])", shape=(8, 64),
        load="smem.at[1, pl.ds(lax.axis_index('x') * 8, 8)]"))
    body = got["program"][0]["body"]
    want = [1, {"start": {"axis": "x", "mul": 8}, "size": 8}]
    self.assertEqual(body[0]["dst"]["index"], want)
    self.assertEqual(body[-1]["src"]["index"], want)

  def test_one_transform(self):
    for transforms, want in (("(plgpu.TilingTransform((8, 64)),)", [{"tiling": [8, 64]}]),
                             ("(plgpu.SwizzleTransform(128),)", [{"swizzle": 128}])):
      got = import_src(scoped_src("(32, 64)", "plgpu.copy_smem_to_gmem(smem, o)", transforms))
      self.assertEqual(got["program"][0]["allocs"][0]["transforms"], want)
      self.assertEqual(got["program"][0]["allocs"][0]["shape"], [32, 64])

  def test_pallas_call_scratch_shapes(self):
    src = HEAD + """\
def collfuzz_case():
  def body(x, o, smem, bar):
    plgpu.copy_gmem_to_smem(x, smem, bar)
    plgpu.barrier_wait(bar)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(smem.at[pl.ds(8, 8)], o.at[pl.ds(8, 8)])
    plgpu.wait_smem_to_gmem(0)
  k = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((32, 64), jnp.float16),
    in_specs=[pl.BlockSpec(memory_space=plgpu.GMEM)], out_specs=pl.BlockSpec(memory_space=plgpu.GMEM),
    scratch_shapes=[plgpu.SMEM((32, 64), jnp.float16, transforms=T), plgpu.Barrier()])
  return k, [jnp.zeros((32, 64), jnp.float16)]
"""
    got = import_src(src)
    self.assertEqual(got["target"]["entry"], "pallas_call")
    scope = got["program"][0]
    self.assertEqual(scope["allocs"][0]["transforms"], T128)
    self.assertEqual(scope["allocs"][0]["shape"], [32, 64])
    self.assertEqual(scope["body"][-1]["src"]["index"], [{"start": 8, "size": 8}])

  def test_scratch_types_with_threads_then_run(self):
    """plgpu.kernel's scratch_types in a kernel of 2 Pallas threads (the scope collective over
    the thread axis) and a lax.fori_loop slot `smem.at[i % 2, pl.ds(8, 8)]`: imported, and the
    imported case run on jax-interpret gives out == x."""
    src = HEAD + """\
def collfuzz_case():
  def body(x, o, smem, bar):
    @pl.when(lax.axis_index("wg") == 0)
    def _():
      def step(i, carry):
        plgpu.copy_gmem_to_smem(x.at[pl.ds(i * 8, 8)], smem.at[i % 2, pl.ds(8, 8)], bar)
        plgpu.barrier_wait(bar)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(smem.at[i % 2, pl.ds(8, 8)], o.at[pl.ds(i * 8, 8)])
        plgpu.wait_smem_to_gmem(0)
        return carry
      lax.fori_loop(0, 4, step, None)
  k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((32, 64), jnp.float16),
                   num_threads=2, thread_name="wg",
                   scratch_types=[plgpu.SMEM((2, 16, 64), jnp.float16, transforms=T),
                                  plgpu.Barrier()])
  return k, [jnp.arange(32 * 64, dtype=jnp.float16).reshape(32, 64) % 1000]
"""
    got = import_src(src)
    scope = got["program"][0]
    self.assertEqual(scope["collective_axes"], ["wg"])
    self.assertEqual(scope["allocs"][0]["transforms"], T128)
    loop = scope["body"][0]["body"][0]
    self.assertEqual(loop["op"], "loop")
    slot = {"loop": loop["index"], "mod": 2}
    self.assertEqual(loop["body"][0]["dst"]["index"], [slot, {"start": 8, "size": 8}])
    self.assertEqual(loop["body"][-1]["src"]["index"], [slot, {"start": 8, "size": 8}])
    out = executor("interpret").run(got)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    y = np.frombuffer(bytes.fromhex(out["outputs"][0]["hex"]), np.float16).reshape(32, 64)
    np.testing.assert_array_equal(y, np.arange(32 * 64, dtype=np.float16).reshape(32, 64) % 1000)

  def test_refused(self):
    self.refused(scoped_src("(32, 64)", "plgpu.copy_smem_to_gmem(smem, o)",
                            "(gpu_core.TransposeTransform((1, 0)),)"),
                 r"k\.py:\d+: an SMEM allocation transformed by TransposeTransform")
    self.refused(scoped_src("(32, 64)", "plgpu.copy_smem_to_gmem(smem, o)",
                            "(plgpu.SwizzleTransform(128), plgpu.TilingTransform((8, 64)))"),
                 r"the transforms \['swizzle', 'tiling'\] in this order.*a swizzle before the "
                 "tiling is not modelled")
    self.refused(scoped_src("(2, 32, 64)", "plgpu.copy_smem_to_gmem(smem.at[:, pl.ds(8, 8)], "
                            "o.at[:, pl.ds(8, 8)])", shape=(2, 32, 64)),
                 r"sliced \(\{'start': 8, 'size': 8\}\) after a whole dim")
    # a vector load or store of a transformed allocation is imported whole (or indexed on its
    # leading untransformed dims: tests/jax/test_transformed_vectors.py); a slice of it, an
    # integer into a tiled dim, and a slice in a vector load of an untransformed one are not
    self.refused(scoped_src("(32, 64)", "o.at[pl.ds(0, 8)][...] = smem.at[pl.ds(0, 8)][...]"),
                 r"a vector load: `smem` indexed with \{'start': 0, 'size': 8\}")
    self.refused(scoped_src("(32, 64)", "smem.at[0][...] = jnp.zeros((64,), jnp.float16)"),
                 r"a vector store into the transformed \(tiled or swizzled\) SMEM allocation "
                 r"`smem` indexed with \[0\], an integer into a tiled dim")
    self.refused(scoped_src("(32, 64)", "o.at[pl.ds(0, 8)][...] = smem.at[pl.ds(0, 8)][...]",
                            "()"),
                 r"a vector load: `smem` indexed with \{'start': 0, 'size': 8\}")


class ReproTest(unittest.TestCase):
  """`collfuzz repro` writes the transforms and the slice, the script runs, and imports back."""

  def test_text(self):
    w = cfjax_repro_body.Writer(multicast_case(), "interpret")
    self.assertEqual(w.alloc_src(multicast_case()["program"][0]["allocs"][0]),
                     "plgpu.SMEM((32, 64), jnp.float16, transforms=(plgpu.TilingTransform((8, 64)), "
                     "plgpu.SwizzleTransform(128)))")
    self.assertEqual(w.alloc_src({"name": "s", "kind": "smem", "shape": [4], "dtype": "int8"}),
                     "plgpu.SMEM((4,), jnp.int8)")
    self.assertEqual(w.smem_index([{"start": {"axis": "x", "mul": 8,
                                              "plus": [{"axis": "y", "mul": 16}]}, "size": 8}]),
                     "pl.ds(lax.axis_index('x') * 8 + lax.axis_index('y') * 16, 8)")
    self.assertEqual(w.smem_index([1, {"start": 8, "size": 8}]), "1, pl.ds(8, 8)")
    self.assertEqual(w.smem_index([1]), "1,")
    with self.assertRaisesRegex(cfjax_repro.Unsupported, "slice entry comes last"):
      w.smem_index([{"start": 8, "size": 8}, 1])
    bad = {"name": "s", "kind": "smem", "shape": [4], "dtype": "int8",
           "transforms": [{"swizzle": 128}, {"tiling": [4]}]}
    with self.assertRaisesRegex(cfjax_repro.Unsupported, "a tiling comes first"):
      w.alloc_src(bad)

  def test_script_runs_and_imports_back(self):
    case = multicast_case()
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    src = generate(case, out)
    self.assertIn("transforms=(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))", src)
    self.assertIn("smem.at[pl.ds(lax.axis_index('x') * 8 + lax.axis_index('y') * 16, 8)]", src)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("as predicted", run.stdout)
    back = import_src(src)
    self.assertEqual(canon(back), canon(case),
                     import_roundtrip.first_difference(canon(back), canon(case)))
    # an output of other values makes the script fail (it can fail)
    bad = copy.deepcopy(out)
    y = bytearray(bytes.fromhex(bad["outputs"][0]["hex"]))
    y[0] ^= 1
    bad["outputs"][0]["hex"] = bytes(y).hex()
    run = run_script(generate(case, bad))
    self.assertNotEqual(run.returncode, 0, run.stdout[-2000:])

  def test_lower_mode_script(self):
    case = multicast_case(profile="mosaic")
    run = run_script(generate(case, {"kind": "completed", "outputs": []}, mode="lower"))
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("lowered for CUDA without an error", run.stdout)


class CanonicalTest(unittest.TestCase):
  """tools/import_roundtrip.canonical: `transforms` kept (an empty list dropped), an SMEM slice's
  dynamic start as a GMEM start's, a last static slice over the whole dim dropped."""

  def test_canonical(self):
    c = small_case((32, 64), "float16", T128, store=([{"start": 0, "size": 32}], []))
    got = canon(c)["program"][0]
    self.assertEqual(got["allocs"][0]["transforms"], T128)
    self.assertEqual(got["body"][-1]["src"]["index"], [])
    c = small_case((32, 64), "float16", [], store=(
        [{"start": {"axis": "x", "plus": [{"axis": "x", "mul": 7}]}, "size": 8}], []))
    got = canon(c)["program"][0]
    self.assertNotIn("transforms", got["allocs"][0])
    self.assertEqual(got["body"][-1]["src"]["index"], [{"start": {"axis": "x", "mul": 8},
                                                        "size": 8}])
    c = small_case((8, 64), "float16", T128, smem_shape=(2, 32, 64),
                   dst_index=[1, {"start": 0, "size": 32}], store=([1, {"start": 8, "size": 8}], []))
    got = canon(c)["program"][0]
    self.assertEqual(got["body"][0]["dst"]["index"], [1])
    self.assertEqual(got["body"][-1]["src"]["index"], [1, {"start": 8, "size": 8}])


class CliTest(unittest.TestCase):
  """The command line, once the C++ side parses `transforms` and SMEM slices: `collfuzz import` of
  JAX's test gives the case, and `collfuzz run --executors reference,jax-interpret,jax-ir` agrees
  on it (out == x, the physical SMEM bytes). Skipped without the binary or while it refuses the
  case as bad input (exit 2)."""

  def setUp(self):
    if not os.access(COLLFUZZ, os.X_OK):
      self.skipTest(f"no {COLLFUZZ}")

  def test_import(self):
    with tempfile.TemporaryDirectory() as d:
      path = write(d, "k.py", kernel_src())
      run = subprocess.run([COLLFUZZ, "import", path, "--python", sys.executable,
                            "--profile", "interpret"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    if run.returncode == 2 and "transforms" in run.stderr:
      self.skipTest(f"{COLLFUZZ} does not parse the case yet: {run.stderr.strip()[:300]}")
    self.assertEqual(run.returncode, 0, run.stderr[-3000:])
    got = json.loads(run.stdout)
    self.assertEqual(canon(got), canon(multicast_case()),
                     import_roundtrip.first_difference(canon(got), canon(multicast_case())))

  def test_run_agrees(self):
    case = multicast_case()
    x = x_array().tobytes()
    with tempfile.TemporaryDirectory() as d:
      path = write(d, "c.json", json.dumps(case))
      run = subprocess.run([COLLFUZZ, "run", path, "--executors", "reference,jax-interpret,jax-ir",
                            "--json", "--python", sys.executable,
                            "--jax", metadata.version("jax")],
                           capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    if run.returncode == 2:
      self.skipTest(f"{COLLFUZZ} does not parse the case yet: {run.stderr.strip()[:300]}")
    self.assertIn(run.returncode, (0, 1), run.stderr[-3000:])
    (got,) = json.loads(run.stdout)
    for ex in got["executors"]:
      self.assertTrue(ex["agrees"], json.dumps(ex["mismatches"])[:3000])
      self.assertEqual(ex["outcome"]["kind"], "completed", json.dumps(ex["outcome"])[:3000])
      self.assertEqual(bytes.fromhex(ex["outcome"]["outputs"][0]["hex"]), x)


if __name__ == "__main__":
  unittest.main()
