"""The `jax_random` fill against JAX itself (docs/case-format.md "Fills").

cfjax_fill draws jax.random.uniform / jax.random.bits with its own numpy threefry2x32; the C++
fill (harness/core/jax_random.cpp) is held to the same bytes by fill_reference.txt
(test_adapter.FillTest). Here both are held to what this JAX release returns, for every dtype the
fill holds, odd and multi-dimensional shapes, and keys split zero to three times. `collfuzz
import` finds such a draw again (cfjax_import_random) and `collfuzz repro` writes it as the call.
"""

import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness", "jax"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import cfjax_fill  # noqa: E402
import cfjax_import_kernel  # noqa: E402
import cfjax_repro_kernel  # noqa: E402

CASES = [
    ("float32", 0, [], (37,)),
    ("float32", 0, [[2, 0]], (128, 128)),
    ("float32", 0, [[2, 1]], (1, 128, 128)),
    ("float16", 3, [[2, 1]], (7, 9)),
    ("bfloat16", 42, [[3, 2], [2, 1]], (2, 3, 5)),
    ("uint32", 7, [], (33,)),
    ("uint16", 7, [[4, 3]], (3, 5)),
    ("uint8", 1234, [[2, 0], [2, 0], [5, 4]], (101,)),
    ("float32", 2 ** 31 - 1, [[1, 0]], (2, 2)),
]


def drawn_by_jax(dtype, seed, split, shape):
  key = jax.random.key(seed)
  for n, i in split:
    key = jax.random.split(key, n)[i]
  d = jnp.dtype(dtype)
  if jnp.issubdtype(d, jnp.floating):
    return np.asarray(jax.random.uniform(key, shape, d))
  return np.asarray(jax.random.bits(key, shape, d))


def fill_of(dtype, seed, split):
  return {"pattern": "jax_random", "distribution": cfjax_fill.JAX_RANDOM_DTYPES[dtype],
          "seed": seed, "split": split}


class JaxRandomFillTest(unittest.TestCase):

  def test_fill_is_what_jax_draws(self):
    for dtype, seed, split, shape in CASES:
      with self.subTest(dtype=dtype, seed=seed, split=split, shape=shape):
        want = drawn_by_jax(dtype, seed, split, shape)
        got = cfjax_fill.fill_array({"shape": list(shape), "dtype": dtype,
                                     "fill": fill_of(dtype, seed, split)})
        self.assertEqual(got.shape, want.shape)
        self.assertEqual(cfjax_fill.pack(got, dtype), cfjax_fill.pack(want, dtype))

  def test_import_finds_the_draw(self):
    for dtype, seed, split, shape in CASES:
      if (seed >= 4096 and seed != 2 ** 31 - 1 or any(i >= 4 for _n, i in split) or
          len(split) > 2 or np.prod(shape) < 8):
        continue  # outside the keys import tries, or too few elements to tell a draw
      with self.subTest(dtype=dtype, seed=seed, split=split):
        fill, why = cfjax_import_kernel.infer_fill(drawn_by_jax(dtype, seed, split, shape), dtype)
        self.assertIsNone(why)
        self.assertEqual(fill["pattern"], "jax_random")
        self.assertEqual(fill["seed"], seed)
        # n does not change the key: the recipe names the smallest n that holds i
        self.assertEqual([i for _n, i in fill.get("split", [])], [i for _n, i in split])
        again = cfjax_fill.fill_array({"shape": list(shape), "dtype": dtype, "fill": fill})
        self.assertEqual(cfjax_fill.pack(again, dtype),
                         cfjax_fill.pack(drawn_by_jax(dtype, seed, split, shape), dtype))

  def test_import_keeps_values_it_cannot_name(self):
    # a seed outside the ones import tries, and a draw that is not uniform on [0, 1)
    far = drawn_by_jax("float32", 99999, [], (64,))
    fill, _ = cfjax_import_kernel.infer_fill(far, "float32")
    self.assertEqual(fill["pattern"], "values")
    scaled = np.asarray(jax.random.uniform(jax.random.key(0), (64,), jnp.float32, -1.0, 1.0))
    fill, _ = cfjax_import_kernel.infer_fill(scaled, "float32")
    self.assertEqual(fill["pattern"], "values")

  def test_repro_writes_the_call(self):
    for dtype, seed, split, shape in CASES:
      src = cfjax_repro_kernel.input_src({"name": "x", "shape": list(shape), "dtype": dtype,
                                          "fill": fill_of(dtype, seed, split)})
      self.assertTrue(src.startswith("jax.random."), src)
      got = np.asarray(eval(src, {"jax": jax, "jnp": jnp}))  # pylint: disable=eval-used
      self.assertEqual(cfjax_fill.pack(got, dtype),
                       cfjax_fill.pack(drawn_by_jax(dtype, seed, split, shape), dtype), src)


if __name__ == "__main__":
  unittest.main()
