"""SMEM transforms (tiling, swizzle) and SMEM slices on the JAX executors: the translation
(cfjax_translate: `plgpu.SMEM(..., transforms=...)`, `smem.at[i, pl.ds(start, size)]`),
jax-interpret (its logical snapshots laid out physically, cfjax_smem_layout), jax-lower, and jax-ir
(TMA loads, stores and reductions with swizzle 32/64/128, rank-4/5 tensor maps of tiled refs).

    .venv-jax/bin/python -m unittest tests/jax/test_smem_transforms.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_smem_transforms.py

JAX's PallasCallTest.test_tma_load_multicast is the main case (smem_transforms_support). Calls the
adapter's modules directly (the C++ side need not parse `transforms` for these).
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import executor  # noqa: E402
from smem_transforms_support import (COMBOS, T128, buffers, cluster_index, cluster_of,  # noqa: E402
                                     multicast_case, small_case, written, x_array)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_smem_layout  # noqa: E402

_EXECUTORS = {}


def run(case, mode):
  """The outcome of `case` on the jax-`mode` executor (one executor per mode, reused)."""
  if mode not in _EXECUTORS:
    _EXECUTORS[mode] = executor(mode)
  c = json.loads(json.dumps(case))
  c["target"]["profile"] = "interpret" if mode == "interpret" else "mosaic"
  return _EXECUTORS[mode].run(c)


def diag(out) -> str:
  return json.dumps(out)[:3000]


class TranslateTest(unittest.TestCase):
  """cfjax_translate: the allocation type and the SMEM index, and what JAX traces of them."""

  @classmethod
  def setUpClass(cls):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax  # pylint: disable=import-outside-toplevel
    import cfjax_translate  # pylint: disable=import-outside-toplevel
    cls.jax = jax
    cls.tr = cfjax_translate

  def test_alloc_type(self):
    from jax.experimental.pallas import mosaic_gpu as plgpu  # pylint: disable=import-outside-toplevel
    a = {"name": "s", "kind": "smem", "shape": [32, 64], "dtype": "float16", "transforms": T128}
    t = self.tr.alloc_type(a)
    self.assertEqual(tuple(t.transforms), (plgpu.TilingTransform((8, 64)),
                                           plgpu.SwizzleTransform(128)))
    self.assertEqual(tuple(t.shape), (32, 64))
    self.assertEqual(tuple(self.tr.alloc_type(dict(a, transforms=[])).transforms), ())
    with self.assertRaisesRegex(cfjax_case.CaseError, "a tiling comes first"):
      self.tr.alloc_type(dict(a, transforms=T128[::-1]))

  def test_smem_index(self):
    from jax.experimental import pallas as pl  # pylint: disable=import-outside-toplevel
    self.assertEqual(self.tr.smem_index([1, {"start": 8, "size": 8}]), (1, pl.ds(8, 8)))
    self.assertEqual(self.tr.smem_index([{"start": 0, "size": 4}]), (pl.ds(0, 4),))
    with self.assertRaisesRegex(cfjax_case.CaseError, "slice entry comes last"):
      self.tr.smem_index([{"start": 0, "size": 4}, 1])
    with self.assertRaisesRegex(cfjax_case.CaseError, "a static integer or a last slice"):
      self.tr.smem_index([0, {"axis": "x"}])

  def test_traced_kernel(self):
    """The scratch allocation is transformed (run_scoped's ref_transforms undo the tiling and
    the swizzle), and the store's source is those transforms then the logical slice
    `pl.ds(8 * collective_idx, 8)` of the (32, 64) buffer."""
    case = cfjax_case.Case.from_json(multicast_case())
    t = self.tr.Translation(case, None)
    args = [self.jax.numpy.asarray(cfjax_fill.fill_array(a)) for a in case.inputs]
    jaxpr = self.jax.jit(t.make_kernel()).trace(*args).jaxpr.jaxpr
    found = {}

    def walk(j):
      for e in j.eqns:
        found.setdefault(e.primitive.name, e)
        if e.primitive.name == "run_scoped" and any(e.params.get("ref_transforms", ())):
          found["transformed run_scoped"] = e  # plgpu.kernel's own scope allocates nothing
        for v in e.params.values():
          for sub in (v if isinstance(v, (tuple, list)) else (v,)):
            inner = getattr(sub, "jaxpr", sub)
            if hasattr(inner, "eqns"):
              walk(inner)

    walk(jaxpr)
    scope = found["transformed run_scoped"]
    self.assertEqual([type(x).__name__ for x in scope.params["ref_transforms"][0]],
                     ["UnswizzleRef", "UntilingTransform"])
    inner = scope.params["jaxpr"]
    self.assertEqual(tuple(getattr(inner, "jaxpr", inner).invars[0].aval.shape), (4, 1, 8, 64))
    store = found["copy_smem_to_gmem"]
    n = store.params["src_transforms_treedef"].num_leaves
    src_t = store.params["src_transforms_treedef"].unflatten(store.invars[2:2 + n])
    self.assertEqual([type(x).__name__ for x in src_t],
                     ["UnswizzleRef", "UntilingTransform", "NDIndexer"])
    self.assertEqual(tuple(src_t[2].shape), (32, 64))
    self.assertEqual(src_t[2].indices[0].size, 8)


class MulticastTest(unittest.TestCase):
  """JAX's test_tma_load_multicast on jax-interpret and jax-ir: out == x (what the test
  asserts), and every CTA's buffer holds its slab of x laid out physically (tiled (8, 64),
  swizzled 128), the same bytes on both executors; jax-lower lowers it."""

  def check(self, collective, noncollective, size):
    case = multicast_case(collective, noncollective, size)
    x = x_array(collective, noncollective, size)
    cluster = cluster_of(collective, noncollective, size)
    alloc = case["program"][0]["allocs"][0]
    outs = {}
    for mode in ("interpret", "ir"):
      out = run(case, mode)
      self.assertEqual(out["kind"], "completed", f"{mode}: {diag(out)}")
      self.assertEqual(out["outputs"][0]["written"], [[0, x.size]], mode)
      got = np.frombuffer(bytes.fromhex(out["outputs"][0]["hex"]), np.float16).reshape(x.shape)
      np.testing.assert_array_equal(got, x, mode)
      bufs = buffers(out)
      self.assertEqual(len(bufs), len(out["ctas"]), mode)
      for c in out["ctas"]:
        slab = x[cluster_index(noncollective, cluster, c["coords"])]
        data = bufs[(c["rank"], "smem")]
        self.assertEqual(data, cfjax_smem_layout.physical_bytes(slab, alloc), (mode, c["rank"]))
        # by hand: row 1 of the first tile starts at byte 128, its 16-byte chunks swapped in
        # pairs (group 1: xor 16); the second tile (rows 8..15) at 1024, its row 1 likewise.
        self.assertEqual(data[144:146], slab[1, 0].tobytes(), (mode, c["rank"]))
        self.assertEqual(data[128:130], slab[1, 8].tobytes(), (mode, c["rank"]))
        self.assertEqual(data[1024 + 144:1024 + 146], slab[9, 0].tobytes(), (mode, c["rank"]))
        self.assertEqual(data[(7 * 128) ^ 0x70:((7 * 128) ^ 0x70) + 2], slab[7, 0].tobytes(),
                         (mode, c["rank"]))  # group 7: xor 0x70
      outs[mode] = out
    self.assertEqual(buffers(outs["interpret"]), buffers(outs["ir"]))
    low = run(case, "lower")
    self.assertEqual(low["kind"], "unavailable", diag(low))
    self.assertIn("lowered for CUDA without an error", low["reason"])

  def test_xy_z_2(self):
    self.check("xy", "z", 2)

  def test_other_parameters(self):
    for combo in COMBOS[1:]:
      with self.subTest(combo=combo):
        self.check(*combo)

  def test_lane_semantics(self):
    case = multicast_case()
    case["target"]["semantics"] = "lane"
    a, b = run(case, "interpret"), run(case, "ir")
    self.assertEqual((a["kind"], b["kind"]), ("completed", "completed"), diag(b))
    self.assertEqual(buffers(a), buffers(b))
    self.assertEqual(a["outputs"][0]["hex"], b["outputs"][0]["hex"])


class LayoutsTest(unittest.TestCase):
  """Other transforms, dtypes and ranks on a cluster of 2: jax-interpret and jax-ir agree byte
  for byte on every buffer and the output (== x); the tensor maps of rank 4 and 5 that Mosaic
  makes of tiled refs are evaluated."""

  def check(self, case):
    spec = case["inputs"][0]
    x = cfjax_fill.pack(cfjax_fill.fill_array(spec), spec["dtype"])
    esz = cfjax_fill.DTYPE_BITS[spec["dtype"]] // 8
    outs = [run(case, m) for m in ("interpret", "ir")]
    for out in outs:
      self.assertEqual(out["kind"], "completed", diag(out))
    self.assertEqual(buffers(outs[0]), buffers(outs[1]))
    self.assertEqual(written(outs[0], esz), written(outs[1], esz))
    return outs, x, esz

  def test_layouts(self):
    for shape, dtype, transforms, sem in (
        ((16, 32), "float16", [{"tiling": [8, 32]}, {"swizzle": 64}], "warpgroup"),
        ((16, 16), "float16", [{"tiling": [8, 16]}, {"swizzle": 32}], "lane"),
        ((16, 32), "float32", [{"tiling": [8, 32]}, {"swizzle": 128}], "warpgroup"),
        ((16, 128), "int8", [{"tiling": [8, 128]}, {"swizzle": 128}], "lane"),
        ((16, 64), "float16", [{"swizzle": 128}], "warpgroup"),
        ((16, 64), "float16", [{"tiling": [8, 64]}], "lane"),
        ((2, 2, 16, 64), "float16", T128, "warpgroup"),  # a rank-5 tensor map
        ((4, 16, 64), "float16", [{"tiling": [2, 8, 64]}, {"swizzle": 128}], "lane")):  # rank 5
      with self.subTest(shape=shape, dtype=dtype, transforms=transforms):
        outs, x, _ = self.check(small_case(shape, dtype, transforms, sem))
        self.assertEqual(bytes.fromhex(outs[1]["outputs"][0]["hex"]), x)
        a = small_case(shape, dtype, transforms)["program"][0]["allocs"][0]
        spec = {"name": "x", "shape": list(shape), "dtype": dtype}
        self.assertEqual(buffers(outs[1])[(0, "smem")],
                         cfjax_smem_layout.physical_bytes(cfjax_fill.fill_array(spec), a))

  def test_slices(self):
    """Static and dynamic slices of a tiled, swizzled buffer, on a copy's either side, after a
    leading integer index."""
    t = T128
    x8 = cfjax_fill.pack(cfjax_fill.fill_array({"name": "x", "shape": [8, 64], "dtype": "float16"}),
                         "float16")
    for label, case, want in (
        ("store rows 8..16", small_case((32, 64), "float16", t, store=(
            [{"start": 8, "size": 8}], [{"start": 8, "size": 8}])), None),
        ("store rows x*8..", small_case((32, 64), "float16", t, store=(
            [{"start": {"axis": "x", "mul": 8}, "size": 8}],
            [{"start": {"axis": "x", "mul": 8}, "size": 8}])), None),
        ("load into rows 8..16", small_case((8, 64), "float16", t, smem_shape=(32, 64),
                                            dst_index=[{"start": 8, "size": 8}],
                                            store=([{"start": 8, "size": 8}], [])), x8),
        ("int then a dynamic slice", small_case(
            (8, 64), "float16", t, smem_shape=(2, 32, 64),
            dst_index=[1, {"start": {"axis": "x", "mul": 8}, "size": 8}],
            store=([1, {"start": {"axis": "x", "mul": 8}, "size": 8}], [])), x8)):
      with self.subTest(label):
        outs, x, esz = self.check(case)
        if want is None:  # the stored rows of x
          want = b"".join(x[b * esz:e * esz] for b, e in outs[0]["outputs"][0]["written"])
        self.assertEqual(written(outs[1], esz), want)

  def test_misaligned_static_slice(self):
    """JAX refuses a static slice of a tiled ref that is not a whole number of tiles
    (UntilingTransform.commute_ndindexer) when it lowers; interpret mode, which drops the
    transforms, runs it."""
    case = small_case((32, 64), "float16", T128, store=([{"start": 4, "size": 8}],
                                                        [{"start": 4, "size": 8}]))
    msg = ("Expected slice start (4) and slice size (8) to be divisible by the tile size (8)")
    for mode in ("lower", "ir"):
      out = run(case, mode)
      self.assertEqual(out["kind"], "rejected", diag(out))
      self.assertEqual(out["diagnostic"]["exception"], "ValueError")
      self.assertIn(msg, out["diagnostic"]["message"])
    self.assertEqual(run(case, "interpret")["kind"], "completed")

  def test_misaligned_dynamic_slice_rounds_up(self):
    """A dynamic start is divided by the tile rounding up (pallas_utils.cdiv): under Lane, CTA 1's
    `smem.at[pl.ds(4, 8)]` is rows 8..16 in the compiled kernel (jax-ir: the store reads SMEM at
    byte 1024, tile 1), rows 4..12 in interpret mode. The output side is tiled too: its tensor map
    is (4, 8, 64) rows of tiles, and `out.at[pl.ds(4, 8)]` is the box at tile 0, row 4 of it, whose
    rows 4..8 of the tile are past the tile's 8 rows: out of bounds, not written. So the compiled
    kernel writes x's rows 8..12 to out's rows 4..8 and leaves out's rows 8..12 unwritten (jax-ir's
    output buffers start zeroed)."""
    dyn = {"start": {"axis": "x", "mul": 4}, "size": 8}
    case = small_case((32, 64), "float16", T128, "lane", store=([dyn], [dyn]))
    x = cfjax_fill.fill_array(case["inputs"][0])
    ir, interp = run(case, "ir"), run(case, "interpret")
    for out in (ir, interp):
      self.assertEqual(out["kind"], "completed", diag(out))
    y_ir = np.frombuffer(bytes.fromhex(ir["outputs"][0]["hex"]), np.float16).reshape(32, 64)
    y_in = np.frombuffer(bytes.fromhex(interp["outputs"][0]["hex"]), np.float16).reshape(32, 64)
    np.testing.assert_array_equal(y_ir[0:4], x[0:4])  # CTA 0 wrote rows 0..8 of x first
    np.testing.assert_array_equal(y_ir[4:8], x[8:12])  # CTA 1: SMEM rows 8.., out rows 4..8
    np.testing.assert_array_equal(y_ir[8:12], np.zeros((4, 64), np.float16))  # out of the tile
    np.testing.assert_array_equal(y_in[0:12], x[0:12])


class MosaicAddressesTest(unittest.TestCase):
  """An independent check of the swizzle jax-ir's TMA applies: a vector load of the swizzled
  buffer (`out[...] = smem[...]`, which the case format refuses, run here through the adapter)
  compiles, for 32-bit elements and 64 rows, to per-lane `llvm.load`s whose SMEM addresses Mosaic
  GPU computes itself (the swizzle's xor in the lowered IR: fragmented_array.py), then plain GMEM
  stores. out == x only where Mosaic's addressing and jax-ir's TMA swizzle are the same
  permutation; with the TMA's swizzle replaced by none, out is not x."""

  @staticmethod
  def case(shape, dtype, transforms, semantics):
    c = small_case(shape, dtype, transforms, semantics)
    c["program"][0]["body"][-1] = {"op": "vector_store", "dst": {"output": "out"},
                                   "value": {"load": {"alloc": "smem"}}}
    return c

  def test_register_loads_read_what_the_tma_wrote(self):
    for shape, dtype, transforms, sem in (
        ((64, 32), "float32", [{"tiling": [8, 32]}, {"swizzle": 128}], "lane"),
        ((64, 16), "int32", [{"tiling": [8, 16]}, {"swizzle": 64}], "warpgroup"),
        ((64, 8), "int32", [{"tiling": [8, 8]}, {"swizzle": 32}], "lane")):
      with self.subTest(dtype=dtype, transforms=transforms, semantics=sem):
        c = self.case(shape, dtype, transforms, sem)
        out = run(c, "ir")
        self.assertEqual(out["kind"], "completed", diag(out))
        x = cfjax_fill.pack(cfjax_fill.fill_array(c["inputs"][0]), dtype)
        self.assertEqual(bytes.fromhex(out["outputs"][0]["hex"]), x)
        self.assertEqual(buffers(out), buffers(run(c, "interpret")))

  def test_a_wrong_tma_swizzle_is_seen(self):
    from unittest import mock  # pylint: disable=import-outside-toplevel
    import cfjax_ir_tma  # pylint: disable=import-outside-toplevel
    c = self.case((64, 32), "float32", [{"tiling": [8, 32]}, {"swizzle": 128}], "lane")
    x = cfjax_fill.pack(cfjax_fill.fill_array(c["inputs"][0]), "float32")
    with mock.patch.object(cfjax_ir_tma, "swizzle_array",
                           lambda n, swizzle, base=0: np.arange(n, dtype=np.int64)):
      out = run(c, "ir")
    self.assertEqual(out["kind"], "completed", diag(out))
    self.assertNotEqual(bytes.fromhex(out["outputs"][0]["hex"]), x)


class ReductionTest(unittest.TestCase):
  """A reducing store (`cp.reduce.async.bulk.tensor`) from a swizzled buffer reads the box through
  the swizzle: a plain store then an `add` of the same tile doubles it."""

  def test_add_of_a_swizzled_tile(self):
    case = small_case((16, 32), "float32", [{"tiling": [8, 32]}, {"swizzle": 128}])
    body = case["program"][0]["body"]
    body.append(dict(body[-1], reduction_op="add"))
    out = run(case, "ir")
    self.assertEqual(out["kind"], "completed", diag(out))
    x = cfjax_fill.fill_array(case["inputs"][0])
    y = np.frombuffer(bytes.fromhex(out["outputs"][0]["hex"]), np.float32).reshape(16, 32)
    np.testing.assert_array_equal(y, x + x)


if __name__ == "__main__":
  unittest.main()
