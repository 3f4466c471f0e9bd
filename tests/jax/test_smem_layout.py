"""The physical layout of a transformed SMEM allocation (harness/jax/cfjax_smem_layout.py): tiling,
then Mosaic GPU's swizzle `o ^ (((o >> 7) % (S // 16)) << 4)` on byte offsets. Needs numpy only.

    .venv-jax/bin/python -m unittest tests/jax/test_smem_layout.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_smem_layout.py
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

import cfjax_fill  # noqa: E402
import cfjax_smem_layout as L  # noqa: E402
from cfjax_case import CaseError  # noqa: E402

T128 = [{"tiling": [8, 64]}, {"swizzle": 128}]


def alloc(shape, dtype, transforms=None):
  a = {"name": "smem", "kind": "smem", "shape": list(shape), "dtype": dtype}
  if transforms is not None:
    a["transforms"] = transforms
  return a


class TransformsTest(unittest.TestCase):
  """Reading a case's `transforms`: tiling first, then swizzle; anything else a CaseError."""

  def test_read(self):
    self.assertEqual(L.transforms_of(alloc([16, 64], "float16", T128)), ((8, 64), 128))
    self.assertEqual(L.transforms_of(alloc([16, 64], "float16")), (None, None))
    self.assertEqual(L.transforms_of(alloc([16, 64], "float16", [])), (None, None))
    self.assertEqual(L.transforms_of(alloc([16, 64], "float16", [{"swizzle": 32}])), (None, 32))
    self.assertEqual(L.transforms_of(alloc([16, 64], "float16", [{"tiling": [8, 64]}])),
                     ((8, 64), None))
    self.assertFalse(L.has_transforms(alloc([4], "int8", [])))

  def test_read_as_given(self):
    # Values JAX refuses are read (the translation hands them to JAX, which raises), but have
    # no layout.
    a = alloc([16, 64], "float16", [{"tiling": [8, 64]}, {"swizzle": 16}])
    self.assertEqual(L.transforms_of(a), ((8, 64), 16))
    with self.assertRaisesRegex(CaseError, "a swizzle of 16 bytes has no layout"):
      L.physical_bytes(np.zeros((16, 64), np.float16), a)
    self.assertEqual(L.transforms_src(a),
                     "(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(16))")

  def test_refused(self):
    for t, pattern in (([{"swizzle": 128}, {"tiling": [8, 64]}], "a tiling comes first"),
                       ([{"swizzle": 0}], "an integer >= 1"),
                       ([{"swizzle": True}], "an integer >= 1"),
                       ([{"tiling": []}], "a list of integers >= 1"),
                       ([{"tiling": [8, 0]}], "a list of integers >= 1"),
                       ([{"transpose": [1, 0]}], "unknown transform 'transpose'"),
                       ([{"tiling": [8, 64], "swizzle": 128}], "expected"),
                       ([{"swizzle": 64}, {"swizzle": 64}], "a second swizzle"),
                       ([{"tiling": [8]}] * 3, "at most two"),
                       ({"tiling": [8, 64]}, "at most two")):
      with self.subTest(t=t):
        with self.assertRaisesRegex(CaseError, pattern):
          L.transforms_of(alloc([16, 64], "float16", t), "$.program[0].allocs[0]")

  def test_shapes(self):
    self.assertEqual(L.tiled_shape((32, 64), (8, 64)), (4, 1, 8, 64))
    self.assertEqual(L.tiled_shape((2, 32, 64), (8, 64)), (2, 4, 1, 8, 64))
    self.assertEqual(L.tiled_shape((4, 16, 64), (2, 8, 64)), (2, 2, 1, 2, 8, 64))
    self.assertEqual(L.tiled_shape((32, 64), None), (32, 64))
    self.assertEqual(L.physical_shape(alloc([32, 64], "float16", T128)), (4, 1, 8, 64))
    with self.assertRaisesRegex(CaseError, "does not divide"):
      L.tiled_shape((12, 64), (8, 64))


class SwizzleTest(unittest.TestCase):
  """The swizzle on byte offsets."""

  def test_permutation_of_each_period(self):
    # A permutation of each 128 * S / 16-byte block (1024 bytes for S = 128), moving 16-byte
    # chunks inside their 128-byte row (for S = 128; inside S bytes in general), an involution.
    for s in (32, 64, 128):
      period = 128 * s // 16
      o = L.swizzle_array(4 * period, s)
      for b in range(4):
        block = o[b * period:(b + 1) * period]
        self.assertEqual(sorted(block.tolist()), list(range(b * period, (b + 1) * period)), s)
      self.assertTrue(np.array_equal(o // s, np.arange(4 * period) // s), s)
      self.assertTrue(np.array_equal(o % 16, np.arange(4 * period) % 16), s)
      self.assertTrue(np.array_equal(o[o], np.arange(4 * period)), s)  # an involution

  def test_known_offsets(self):
    # Mosaic GPU: swizzle_group = (offset // 128) % (swizzle // 16); offset ^= swizzle_group * 16
    self.assertEqual(L.swizzle_offset(0, 128), 0)
    self.assertEqual(L.swizzle_offset(127, 128), 127)
    self.assertEqual(L.swizzle_offset(128, 128), 144)
    self.assertEqual(L.swizzle_offset(144, 128), 128)
    self.assertEqual(L.swizzle_offset(7 * 128 + 5, 128), 7 * 128 + (5 ^ 0x70))
    self.assertEqual(L.swizzle_offset(1024 + 128, 128), 1024 + 144)  # the pattern repeats
    self.assertEqual(L.swizzle_offset(128, 64), 144)
    self.assertEqual(L.swizzle_offset(256, 64), 256 + 32)  # (256 >> 7) % 4 = 2: xor 32
    self.assertEqual(L.swizzle_offset(256 + 32, 64), 256)
    self.assertEqual(L.swizzle_offset(512 + 16, 64), 512 + 16)  # (512 >> 7) % 4 = 0
    self.assertEqual(L.swizzle_offset(128, 32), 144)
    self.assertEqual(L.swizzle_offset(256, 32), 256)  # (256 >> 7) % 2 = 0
    self.assertEqual(L.swizzle_offset(200, None), 200)
    # a buffer's offsets relative to a base, as jax-ir swizzles a copy at SMEM offset 1024
    self.assertEqual(L.swizzle_array(256, 128, base=1024).tolist()[128:130], [144, 145])

  def test_element_offsets_by_hand(self):
    # f16 (16, 64), tiling (8, 64), swizzle 128: a row of the tile is 128 bytes.
    shape, t, s = (16, 64), (8, 64), 128
    self.assertEqual(L.element_offset((0, 0), shape, 2, t, s), 0)
    self.assertEqual(L.element_offset((1, 0), shape, 2, t, s), 128 ^ 16)  # 144
    self.assertEqual(L.element_offset((1, 8), shape, 2, t, s), (128 + 16) ^ 16)  # 128
    self.assertEqual(L.element_offset((8, 0), shape, 2, t, s), 1024)  # tile 1, group 0
    self.assertEqual(L.element_offset((9, 0), shape, 2, t, s), 1152 ^ 16)
    self.assertEqual(L.element_offset((7, 63), shape, 2, t, s), (7 * 128 + 126) ^ 0x70)
    # f16 (16, 128) tiled (8, 64): element (0, 64) starts the second tile of the first row of tiles
    self.assertEqual(L.element_offset((0, 64), (16, 128), 2, (8, 64), None), 1024)
    self.assertEqual(L.element_offset((8, 0), (16, 128), 2, (8, 64), None), 2048)
    # no transforms: row-major
    self.assertEqual(L.element_offset((3, 5), (16, 64), 2), (3 * 64 + 5) * 2)


class PhysicalBytesTest(unittest.TestCase):
  """A logical buffer laid out physically: identity without transforms, each element at its
  element_offset with them."""

  def test_identity_without_transforms(self):
    for dtype in ("float16", "int8", "int4", "float32"):
      a = alloc([4, 32], dtype)
      x = cfjax_fill.fill_array(dict(a, fill={"pattern": "random", "seed": 3}))
      self.assertEqual(L.physical_bytes(x, a), cfjax_fill.pack(x, dtype))
      self.assertEqual(L.physical_bytes(x, dict(a, transforms=[])), cfjax_fill.pack(x, dtype))

  def test_each_element_at_its_offset(self):
    for shape, dtype, transforms in (
        ((16, 64), "float16", T128),
        ((2, 32, 64), "float16", T128),
        ((16, 32), "float16", [{"tiling": [8, 32]}, {"swizzle": 64}]),
        ((16, 16), "float16", [{"tiling": [8, 16]}, {"swizzle": 32}]),
        ((16, 32), "float32", [{"tiling": [8, 32]}, {"swizzle": 128}]),
        ((16, 128), "int8", [{"tiling": [8, 128]}, {"swizzle": 128}]),
        ((16, 64), "float16", [{"swizzle": 128}]),
        ((16, 128), "float16", [{"tiling": [8, 64]}]),
        ((4, 16, 64), "float16", [{"tiling": [2, 8, 64]}, {"swizzle": 128}])):
      with self.subTest(shape=shape, dtype=dtype, transforms=transforms):
        a = alloc(shape, dtype, transforms)
        x = cfjax_fill.fill_array(dict(a, fill={"pattern": "random", "seed": 7}))
        data = L.physical_bytes(x, a)
        self.assertEqual(len(data), L.buffer_bytes(a))
        tiling, swizzle = L.transforms_of(a)
        esz = cfjax_fill.DTYPE_BITS[dtype] // 8
        raw = x.view(np.uint8).reshape(*shape, esz) if esz > 1 else x.view(np.uint8)
        for index in np.ndindex(*shape):
          o = L.element_offset(index, shape, esz, tiling, swizzle)
          self.assertEqual(data[o:o + esz], raw[index].tobytes(), index)

  def test_swizzle_bytes_round_trip(self):
    data = bytes(range(256)) * 8
    for s in (32, 64, 128):
      self.assertEqual(L.unswizzle_bytes(L.swizzle_bytes(data, s), s), data)
    with self.assertRaisesRegex(CaseError, "whole number of 128-byte rows"):
      L.swizzle_bytes(bytes(64), 128)

  def test_transforms_src(self):
    self.assertEqual(L.transforms_src(alloc([16, 64], "float16", T128)),
                     "(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))")
    self.assertEqual(L.transforms_src(alloc([16, 64], "float16", [{"swizzle": 64}])),
                     "(plgpu.SwizzleTransform(64),)")
    self.assertEqual(L.transforms_src(alloc([16, 64], "float16")), "")


if __name__ == "__main__":
  unittest.main()
