"""Vector loads and stores of a tiled, swizzled SMEM allocation (`"transforms": [{"tiling": ...},
{"swizzle": 128}]`): `out[...] = smem[...]`, `smem[...] = smem[...] + 1`, and JAX's
`test_cluster_ref_read` (a peer CTA's tiled buffer through `plgpu.cluster_ref`), on jax-ir, through
`collfuzz import` (cfjax_import_vectors) and as a `collfuzz repro` script.

    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax/bin/python -m unittest tests/jax/test_transformed_vectors.py
    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_transformed_vectors.py

Mosaic GPU loads such a ref with FragmentedArray.load_tiled in the WGMMA layout, each lane at its
own swizzled SMEM addresses: 32-bit elements by `llvm.load` of `vector<2 x T>`, 16-bit ones by
`nvvm.ldmatrix` (4 8x8 matrices a warp; stores `nvvm.stmatrix`), a peer's by `llvm.load` through
the `!llvm.ptr<7>` that mapa made. Every expectation is the logical one, by hand (inputs are
iotas: element i holds i + 1): out == x, x + 1, or the other CTA's x; every SMEM buffer's bytes are
its logical contents laid out by the transforms (cfjax_smem_layout.physical_bytes). Calls the
adapter's modules directly (the C++ parser need not accept these cases).
"""

import copy
import json
import os
import sys
import unittest
from importlib import metadata
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numpy as np  # noqa: E402

from loop_case_support import executor, import_source, run_script  # noqa: E402

import cfjax_fill  # noqa: E402
import cfjax_smem_layout  # noqa: E402

JAX = metadata.version("jax")
OLD = JAX == "0.11.2"  # 0.12.0.1 plans a WGMMA value's GMEM store and refuses 16-bit ones

_EXECUTORS = {}


def run(case, mode="ir"):
  if mode not in _EXECUTORS:
    _EXECUTORS[mode] = executor(mode)
  c = copy.deepcopy(case)
  c["target"]["profile"] = "interpret" if mode == "interpret" else "mosaic"
  return _EXECUTORS[mode].run(c)


def diag(out) -> str:
  return json.dumps(out)[:3000]


def transforms(dtype, swizzle=128):
  bits = np.dtype(cfjax_fill.numpy_dtype(dtype)).itemsize * 8
  return [{"tiling": [8, 8 * swizzle // bits]}, {"swizzle": swizzle}]


def case(name, dtype, shape, semantics, value=None, smem_value=None):
  """One CTA: x (an iota) TMA-loaded into the transformed `smem`, then `out[...] = value` or
  `smem[...] = smem_value` and a TMA store of smem into out."""
  body = [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "smem"},
           "barrier": {"alloc": "bar"}},
          {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]
  if value is not None:
    body.append({"op": "vector_store", "dst": {"output": "out"}, "value": value})
  if smem_value is not None:
    body.append({"op": "vector_store", "dst": {"alloc": "smem"}, "value": smem_value})
    body.append({"op": "copy_smem_to_gmem", "src": {"alloc": "smem"}, "dst": {"output": "out"}})
  return {"format": 1, "name": name, "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": "mosaic"},
          "inputs": [{"name": "x", "shape": list(shape), "dtype": dtype,
                      "fill": {"pattern": "iota"}}],
          "outputs": [{"name": "out", "shape": list(shape), "dtype": dtype}],
          "program": [{"op": "run_scoped", "allocs": [
              {"name": "smem", "kind": "smem", "shape": list(shape), "dtype": dtype,
               "transforms": transforms(dtype)},
              {"name": "bar", "kind": "barrier", "num_arrivals": 1, "num_barriers": []}],
              "body": body}]}


LOAD = {"load": {"alloc": "smem"}}
PLUS1 = {"add": [LOAD, {"const": 1}]}
PEER = {"axis": "x", "mul": -1, "add": 1}


def read_case(dtype, shape, semantics, write=False):
  """test_cluster_ref_read on a tiled buffer: a (2,) cluster, CTA i copies x[i] into its `smem`,
  syncs the cluster, and stores out[i] = plgpu.cluster_ref(smem, {"x": 1 - i})[...]. With
  `write`, CTA i instead stores its smem + 1 into the other CTA's transformed `dst`, syncs, and
  TMA-stores its own dst into out[i]."""
  allocs = [{"name": "smem", "kind": "smem", "shape": list(shape), "dtype": dtype,
             "transforms": transforms(dtype)},
            {"name": "bar", "kind": "barrier", "num_arrivals": 1, "num_barriers": []},
            {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"],
             "num_arrivals": 1}]
  row = [{"axis": "x"}]
  body = [{"op": "copy_gmem_to_smem", "src": {"input": "x", "index": row},
           "dst": {"alloc": "smem"}, "barrier": {"alloc": "bar"}},
          {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]
  sync = [{"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
          {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}}]
  if write:
    allocs.insert(1, dict(allocs[0], name="dst"))
    body += [{"op": "vector_store", "dst": {"alloc": "dst", "cluster": {"x": PEER}},
              "value": PLUS1}] + sync + [
        {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"},
         "dst": {"output": "out", "index": row}}]
  else:
    body += sync + [{"op": "vector_store", "dst": {"output": "out", "index": row},
                     "value": {"load": {"alloc": "smem", "cluster": {"x": PEER}}}}]
  full = [2] + list(shape)
  return {"format": 1, "name": "cluster_ref_tiled",
          "mesh": {"cluster": [2], "cluster_names": ["x"]},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": "mosaic"},
          "inputs": [{"name": "x", "shape": full, "dtype": dtype, "fill": {"pattern": "iota"}}],
          "outputs": [{"name": "out", "shape": full, "dtype": dtype}],
          "program": [{"op": "run_scoped", "allocs": allocs, "body": body}]}


def x_of(c):
  return cfjax_fill.fill_array(c["inputs"][0])


def plus_one(x):
  if x.dtype.kind == "f" or "float" in str(x.dtype):
    return (x.astype(np.float32) + 1).astype(x.dtype)  # one rounding, as the kernel's
  return (x + x.dtype.type(1)).astype(x.dtype)


def output(out, c, k=0):
  spec = c["outputs"][k]
  a = np.frombuffer(bytes.fromhex(out["outputs"][k]["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def physical(c, alloc_name, logical):
  alloc = next(a for a in c["program"][0]["allocs"] if a["name"] == alloc_name)
  return cfjax_smem_layout.physical_bytes(np.ascontiguousarray(logical), alloc)


def smem_of(out, rank, alloc_name="smem"):
  cta = next(x for x in out["ctas"] if x["rank"] == rank)
  return bytes.fromhex(next(b for b in cta["buffers"] if b["alloc"] == alloc_name)["hex"])


def same_bits(test, got, want):
  test.assertEqual(got.shape, want.shape)
  test.assertTrue(np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                                 np.ascontiguousarray(want).view(np.uint8)),
                  f"{int((got != want).sum())} elements differ; got {got.reshape(-1)[:8]}, "
                  f"want {want.reshape(-1)[:8]}")


class IrTest(unittest.TestCase):
  """jax-ir runs the kernels (both semantics), and what they compute is the logical answer."""

  def check(self, c, want, smem_want):
    out = run(c)
    self.assertEqual(out["kind"], "completed", diag(out))
    same_bits(self, output(out, c), want)
    self.assertEqual(smem_of(out, 0), physical(c, "smem", smem_want))
    return out

  def test_f32_register_loads_and_stores(self):
    # 64 x 32 float32, tiling (8, 32), swizzle 128: llvm.load / llvm.store of vector<2xf32>
    for sem in ("lane", "warpgroup"):
      c = case("f32_plus1", "float32", (64, 32), sem, value=PLUS1)
      x = x_of(c)
      with self.subTest(semantics=sem, op="out = smem + 1"):
        self.check(c, plus_one(x), x)
      c = case("f32_smem_plus1", "float32", (64, 32), sem, smem_value=PLUS1)
      with self.subTest(semantics=sem, op="smem = smem + 1"):
        self.check(c, plus_one(x), plus_one(x))

  def test_16bit_ldmatrix_and_stmatrix(self):
    # int16 64 x 64, tiling (8, 64): every element distinct, so the layout shows
    for sem in ("lane", "warpgroup"):
      c = case("i16_smem_plus1", "int16", (64, 64), sem, smem_value=PLUS1)
      x = x_of(c)
      with self.subTest(semantics=sem, op="smem = smem + 1"):
        out = self.check(c, plus_one(x), plus_one(x))
        self.assertEqual(smem_of(out, 0), smem_of(run(c, "interpret"), 0))
      c = case("f16_plus1", "float16", (64, 64), sem, value=PLUS1)
      with self.subTest(semantics=sem, op="out = smem + 1 (float16)"):
        if OLD:
          self.check(c, plus_one(x_of(c)), x_of(c))
        else:  # 0.12.0.1: the WGMMA value's 16-bit GMEM store is refused while lowering
          out = run(c)
          self.assertEqual(out["kind"], "rejected", diag(out))
          self.assertEqual(out["diagnostic"]["exception"], "TransferPlanDerivationError")

  def test_a_transposed_ldmatrix_is_seen(self):
    """Planted: the module's ldmatrix made `.trans` (`layout = <col>`). Alone it transposes each
    8x8 block the lanes read, and out is not x + 1; with the stmatrix transposed too, the two
    transpositions cancel (the store puts each element back where the load took it)."""
    import cfjax_ir_extract  # pylint: disable=import-outside-toplevel
    c = case("i16_smem_plus1", "int16", (64, 64), "lane", smem_value=PLUS1)
    want = plus_one(x_of(c))

    def flip(which):
      def edit(text, name=""):
        return "\n".join(l.replace("layout = <row>", "layout = <col>") if any(w in l for w in which)
                         else l for l in text.split("\n"))
      return edit

    with mock.patch.object(cfjax_ir_extract, "planted_edit", flip(("nvvm.ldmatrix",))):
      out = run(c)
    self.assertEqual(out["kind"], "completed", diag(out))
    self.assertFalse(np.array_equal(output(out, c), want))
    with mock.patch.object(cfjax_ir_extract, "planted_edit",
                           flip(("nvvm.ldmatrix", "nvvm.stmatrix"))):
      out = run(c)
    self.assertEqual(out["kind"], "completed", diag(out))
    same_bits(self, output(out, c), want)

  def test_an_op_not_in_the_table_is_unavailable(self):
    import cfjax_ir_core  # pylint: disable=import-outside-toplevel
    c = case("i16_smem_plus1", "int16", (64, 64), "warpgroup", smem_value=PLUS1)
    with mock.patch.dict(cfjax_ir_core.OPS):
      del cfjax_ir_core.OPS["nvvm_stmatrix"]
      out = run(c)
    self.assertEqual((out["kind"], out.get("reason")), ("unavailable", "op nvvm.stmatrix"))


class ClusterRefTest(unittest.TestCase):
  """JAX's test_cluster_ref_read on a tiled, swizzled buffer: each CTA reads the other's SMEM
  through shared::cluster (`llvm.load` of `!llvm.ptr<7>` at lane-dependent, swizzled addresses)."""

  def test_read(self):
    for dtype, shape in (("float32", (64, 32)), ("int16", (64, 64))):
      for sem in ("lane", "warpgroup"):
        c = read_case(dtype, shape, sem)
        x = x_of(c)
        with self.subTest(dtype=dtype, semantics=sem):
          out = run(c)
          if dtype == "int16" and not OLD:  # 0.12.0.1 refuses the 16-bit GMEM store
            self.assertEqual(out["kind"], "rejected", diag(out))
            continue
          self.assertEqual(out["kind"], "completed", diag(out))
          same_bits(self, output(out, c), x[::-1])
          for r in (0, 1):
            self.assertEqual(smem_of(out, r), physical(c, "smem", x[r]))

  def test_write_into_the_peer(self):
    # Lane only: Warpgroup refuses a store through cluster_ref (#mosaic_gpu.smem_cluster)
    for dtype, shape in (("float32", (64, 32)), ("float16", (64, 64))):
      c = read_case(dtype, shape, "lane", write=True)
      x = x_of(c)
      with self.subTest(dtype=dtype):
        out = run(c)
        self.assertEqual(out["kind"], "completed", diag(out))
        same_bits(self, output(out, c), plus_one(x)[::-1])
        for r in (0, 1):
          self.assertEqual(smem_of(out, r, "dst"), physical(c, "dst", plus_one(x[1 - r])))


IMPORT_KERNEL = '''
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

T = (plgpu.TilingTransform((8, 32)), plgpu.SwizzleTransform(128))

def collfuzz_case():
  def body(x_ref, o_ref, o2_ref):
    def scope(smem, bar):
      plgpu.copy_gmem_to_smem(x_ref, smem, bar)
      plgpu.barrier_wait(bar)
      %s
    pl.run_scoped(scope, plgpu.SMEM(%s, jnp.int32, transforms=T), plgpu.Barrier())
  k = plgpu.kernel(body, out_type=(jax.ShapeDtypeStruct((64, 32), jnp.int32),
                                   jax.ShapeDtypeStruct((64, 32), jnp.int32)))
  return k, [jnp.arange(%d, dtype=jnp.int32).reshape(%s)]
'''

STATEMENTS = """o_ref[...] = smem[...]
      smem[...] = smem[...] + 1
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem, o2_ref)
      plgpu.wait_smem_to_gmem(0)"""

READ_KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

T = (plgpu.TilingTransform((8, 32)), plgpu.SwizzleTransform(128))

def collfuzz_case():
  def body(x_ref, o_ref, smem, bar, cbar):
    i = lax.axis_index("x")
    plgpu.copy_gmem_to_smem(x_ref.at[i], smem, bar)
    plgpu.barrier_wait(bar)
    plgpu.barrier_arrive(cbar.at[0])
    plgpu.barrier_wait(cbar.at[0])
    o_ref[i] = plgpu.cluster_ref(smem, {"x": 1 - i})[...]

  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((2, 64, 32), jnp.float32),
      scratch_types=[plgpu.SMEM((64, 32), jnp.float32, transforms=T), plgpu.Barrier(),
                     plgpu.ClusterBarrier(collective_axes=("x",), num_barriers=1)],
      cluster=(2,), cluster_names=("x",))
  return kernel, [jnp.arange(2 * 64 * 32, dtype=jnp.float32).reshape(2, 64, 32)]
'''


class ImportTest(unittest.TestCase):
  """`collfuzz import`: the load and the dst stay {"alloc": NAME}, the allocation keeps its
  transforms; what a case cannot hold (an integer into a tiled dim, a slice) is refused."""

  T = [{"tiling": [8, 32]}, {"swizzle": 128}]

  def test_load_and_store(self):
    got = import_source(IMPORT_KERNEL % (STATEMENTS, "(64, 32)", 64 * 32, "64, 32"))
    scope = got["program"][0]
    smem = scope["allocs"][0]
    self.assertEqual((smem["name"], smem["shape"], smem["dtype"], smem["transforms"]),
                     ("smem", [64, 32], "int32", self.T))
    body = scope["body"]
    self.assertEqual(body[2], {"op": "vector_store", "dst": {"output": "out0"},
                               "value": {"load": {"alloc": "smem"}}})
    self.assertEqual(body[3], {"op": "vector_store", "dst": {"alloc": "smem"},
                               "value": {"add": [{"load": {"alloc": "smem"}}, {"const": 1}]}})
    self.assertEqual(body[4]["op"], "copy_smem_to_gmem")
    # the imported case runs: jax-ir and jax-interpret, out0 == x and out1 == x + 1
    x = np.arange(64 * 32, dtype=np.int32).reshape(64, 32)
    for mode, sem in (("ir", "lane"), ("ir", "warpgroup"), ("interpret", "lane")):
      c = copy.deepcopy(got)
      c["target"]["semantics"] = sem
      with self.subTest(mode=mode, semantics=sem):
        out = run(c, mode)
        self.assertEqual(out["kind"], "completed", diag(out))
        same_bits(self, output(out, c, 0), x)
        same_bits(self, output(out, c, 1), x + 1)

  def test_leading_index(self):
    stmts = "o_ref[...] = smem.at[1][...]\n      smem.at[0][...] = smem.at[1][...] + 1"
    got = import_source(IMPORT_KERNEL % (stmts, "(2, 64, 32)", 2 * 64 * 32, "2, 64, 32"))
    body = got["program"][0]["body"]
    self.assertEqual(body[2]["value"], {"load": {"alloc": "smem", "index": [1]}})
    self.assertEqual(body[3]["dst"], {"alloc": "smem", "index": [0]})

  def test_cluster_ref_read(self):
    got = import_source(READ_KERNEL)
    self.assertEqual(got["program"][0]["allocs"][0]["transforms"],
                     [{"tiling": [8, 32]}, {"swizzle": 128}])
    self.assertEqual(got["program"][0]["body"][-1]["value"],
                     {"load": {"alloc": "smem", "cluster": {"x": PEER}}})

  def test_refused(self):
    import cfjax_import  # pylint: disable=import-outside-toplevel
    for stmt, why in (
        ("o_ref.at[0][...] = smem.at[0][...]",
         r"a load \(`get`\) of the transformed \(tiled or swizzled\) SMEM allocation `smem` "
         r"indexed with \[0\], an integer into a tiled dim"),
        ("smem.at[3][...] = jnp.zeros((32,), jnp.int32)",
         r"a vector store into the transformed .* `smem` indexed with \[3\], an integer into a "
         "tiled dim"),
        ("o_ref.at[pl.ds(0, 8)][...] = smem.at[pl.ds(0, 8)][...]",
         r"a vector load: `smem` indexed with \{'start': 0, 'size': 8\}")):
      with self.subTest(stmt=stmt):
        with self.assertRaisesRegex(cfjax_import.ImportRefused, why):
          import_source(IMPORT_KERNEL % (stmt, "(64, 32)", 64 * 32, "64, 32"))


class ReproTest(unittest.TestCase):
  """`collfuzz repro` (cfjax_repro.generate, as the C++ command calls it): the script of such a
  case runs as predicted, and imports back to the case."""

  def generate(self, c, mode, expected):
    import cfjax_repro  # pylint: disable=import-outside-toplevel
    return cfjax_repro.generate({"case": c, "mode": mode, "expected": expected, "match": "exact",
                                 "collfuzz": "collfuzz test", "jax": JAX,
                                 "command": "collfuzz repro t.json"})

  def test_interpret_script(self):
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    c = case("i16_smem_plus1", "int16", (64, 64), "lane", value=LOAD, smem_value=PLUS1)
    c["outputs"].append({"name": "out2", "shape": [64, 64], "dtype": "int16"})
    c["program"][0]["body"][-1]["dst"]["output"] = "out2"
    c["target"]["profile"] = "interpret"
    out = run(c, "interpret")
    self.assertEqual(out["kind"], "completed", diag(out))
    same_bits(self, output(out, c, 1), plus_one(x_of(c)))
    src = self.generate(c, "interpret", out)
    self.assertIn("smem[...] = smem[...] + jnp.full((64, 64), 1, jnp.int16)", src)
    r = run_script(src)
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("as predicted", r.stdout)
    back = import_source(src)
    self.assertIsNone(import_roundtrip.first_difference(import_roundtrip.canonical(back),
                                                        import_roundtrip.canonical(c)))
    # a wrong prediction fails the script
    bad = copy.deepcopy(out)
    y = bytearray(bytes.fromhex(bad["outputs"][1]["hex"]))
    y[0] ^= 1
    bad["outputs"][1]["hex"] = bytes(y).hex()
    r = run_script(self.generate(c, "interpret", bad))
    self.assertNotEqual(r.returncode, 0, r.stdout[-2000:])

  def test_lower_script(self):
    c = read_case("float32", (64, 32), "warpgroup")
    r = run_script(self.generate(c, "lower", {"kind": "completed", "outputs": []}))
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("lowered for CUDA without an error", r.stdout)


if __name__ == "__main__":
  unittest.main()
