"""Inputs drawn with jax.random, recognised by `collfuzz import` as a `jax_random` fill.

A kernel file's inputs are arrays: how they were made is gone. An array that
`jax.random.uniform(key, shape, dtype)` or `jax.random.bits(key, shape, dtype)` drew is found
again by trying the keys tests write: `jax.random.key(seed)` (or `PRNGKey(seed)`) for a seed in
0..4095 or a few common larger ones, split at most twice (`ka, kb = jax.random.split(key)`,
`jax.random.split(key, 4)[3]`, ...). The first elements of every candidate's draw are computed at
once (numpy, cfjax_fill.threefry2x32), and a candidate is kept only when the whole array equals
its fill bit for bit. The split's `n` does not change a key (JAX's partitionable split), so the
recipe writes the smallest n that holds the index (2, or i + 1).
"""

from __future__ import annotations

import functools

import numpy as np

import cfjax_fill

SEEDS = np.concatenate([np.arange(4096), np.array([12345, 31337, 54321, 123456, 1234567,
                                                    20240101, 2 ** 31 - 1])]).astype(np.uint64)
MAX_SPLIT_INDEX = 4   # split(key, n)[i] for i < 4, at most twice
PREFIX = 8            # elements compared for every candidate before the whole array is


@functools.lru_cache(maxsize=1)
def _candidate_keys():
  """(k0, k1, paths): every candidate key as two uint32 arrays, and its split path per seed."""
  k0 = (SEEDS >> np.uint64(32)).astype(np.uint32)
  k1 = (SEEDS & np.uint64(0xFFFFFFFF)).astype(np.uint32)
  keys = [((k0, k1), ())]  # computed once per process (the cache), read by every array
  level = [((k0, k1), ())]
  for _depth in range(2):
    nxt = []
    for (a, b), path in level:
      for i in range(MAX_SPLIT_INDEX):
        nxt.append((cfjax_fill.threefry2x32(a, b, 0, i), path + (i,)))
    keys += nxt
    level = nxt
  return keys


def recognise(arr: np.ndarray, dtype: str) -> dict | None:
  """The `jax_random` fill that reproduces `arr` (already of `dtype`), or None."""
  if dtype not in cfjax_fill.JAX_RANDOM_DTYPES or arr.size < PREFIX:
    return None
  flat = np.ascontiguousarray(arr).reshape(-1)
  uint = f"u{flat.dtype.itemsize}"
  target = flat.view(uint)
  for (k0, k1), path in _candidate_keys():
    found = None
    alive = np.ones(len(SEEDS), dtype=bool)
    for e in range(PREFIX):
      hi, lo = cfjax_fill.threefry2x32(k0, k1, 0, e)
      got = cfjax_fill.jax_random_draw(hi ^ lo, dtype)
      alive &= got.view(uint) == target[e]
      if not alive.any():
        break
    for s in np.nonzero(alive)[0]:
      fill = {"pattern": "jax_random", "distribution": cfjax_fill.JAX_RANDOM_DTYPES[dtype],
              "seed": int(SEEDS[s]), "split": [[max(2, i + 1), i] for i in path]}
      got = cfjax_fill.jax_random_array(fill, dtype, flat.shape)
      if cfjax_fill.pack(got, dtype) == cfjax_fill.pack(flat, dtype):
        found = fill
        break
    if found:
      if not found["split"]:
        del found["split"]
      return found
  return None
