"""Array contents for the JAX executor: input fills, byte packing and digests.

This reimplements harness/core/fill.cpp bit for bit (docs/case-format.md "Fills" is normative):
element i (row-major) of a recipe fill (iota, random, constant, arange) holds a small integer v,
stored exactly in the dtype; an explicit `values` fill holds the numbers it lists; a `jax_random`
fill holds what jax.random.uniform or jax.random.bits draws from a split jax.random.key (threefry2x32
as both modelled JAX releases compute it; tests/jax/test_jax_random.py holds it against JAX). Memory is packed
row-major and little-endian; int4/uint4 hold two elements per byte, the lower-indexed element in
the low nibble.

Only numpy and ml_dtypes are needed (no JAX), so this module imports fast and is unit-testable on
its own.
"""

from __future__ import annotations

import numpy as np

SMEM_SENTINEL = 0xA5

_MASK64 = (1 << 64) - 1

# name -> (storage bits, is_float)
DTYPE_BITS = {
    "int4": 4, "uint4": 4, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16,
    "int32": 32, "uint32": 32, "int64": 64, "uint64": 64,
    "float8_e4m3fn": 8, "float8_e5m2": 8, "bfloat16": 16, "float16": 16,
    "float32": 32, "float64": 64,
}

# Elements of one explicit `values` fill (harness/core/limits.h kMaxFillValues).
MAX_FILL_VALUES = 65536

_FLOATS = {"float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32", "float64"}


def value_range(dtype: str) -> tuple[int, int]:
  """The [lo, hi] range of the small integers a fill stores in `dtype`."""
  if dtype == "int4":
    return -8, 7
  if dtype == "uint4":
    return 0, 15
  if dtype == "int8":
    return -128, 127
  if dtype == "uint8":
    return 0, 255
  if dtype in ("float8_e4m3fn", "float8_e5m2"):
    return -7, 7
  if dtype == "bfloat16":
    return -255, 255
  if dtype in ("float16", "float32", "float64"):
    return -2047, 2047
  if dtype == "int16":
    return -32768, 32767
  if dtype == "uint16":
    return 0, 65535
  if dtype in ("int32", "uint32", "int64", "uint64"):
    return -(1 << 30), (1 << 30) - 1
  raise ValueError(f"unknown dtype {dtype!r}")


def splitmix64(x: int) -> int:
  """The scalar splitmix64 of docs/case-format.md (all arithmetic mod 2^64)."""
  x = (x + 0x9E3779B97F4A7C15) & _MASK64
  x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
  x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
  return x ^ (x >> 31)


def _splitmix64_vec(x: np.ndarray) -> np.ndarray:
  x = x.astype(np.uint64)
  with np.errstate(over="ignore"):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
  return x ^ (x >> np.uint64(31))


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
JAX_RANDOM_DTYPES = {"float32": "uniform", "float16": "uniform", "bfloat16": "uniform",
                     "uint8": "bits", "uint16": "bits", "uint32": "bits"}


def threefry2x32(k0, k1, x0, x1):
  """The Threefry-2x32 block (20 rounds) of counters (x0, x1) under key (k0, k1), elementwise on
  uint32 arrays (jax/_src/random/threefry2x32.py, its unrolled lowering)."""
  k0, k1, x0, x1 = (np.asarray(v, dtype=np.uint32) for v in (k0, k1, x0, x1))
  ks = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
  with np.errstate(over="ignore"):
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for group in range(5):
      for r in _ROTATIONS[group % 2]:
        x0 = x0 + x1
        x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
        x1 = x1 ^ x0
      x0 = x0 + ks[(group + 1) % 3]
      x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
  return x0, x1


def jax_random_key(seed: int, split=()) -> tuple[int, int]:
  """jax.random.key(seed), then split(key, n)[i] for each [n, i] (the partitionable split: key i
  is threefry2x32(key, (0, i)), whatever n)."""
  k = (np.uint32((int(seed) >> 32) & 0xFFFFFFFF), np.uint32(int(seed) & 0xFFFFFFFF))
  for _n, i in split:
    k = threefry2x32(k[0], k[1], 0, int(i))
  return k


def jax_random_array(fill: dict, dtype: str, shape) -> np.ndarray:
  """A `jax_random` fill: jax.random.uniform (float32, float16, bfloat16) or jax.random.bits
  (uint8, uint16, uint32) of the split key, element j from threefry2x32(key, (j >> 32, j))."""
  if dtype not in JAX_RANDOM_DTYPES:
    raise ValueError(f"a jax_random fill of dtype {dtype}")
  shape = tuple(int(d) for d in shape)
  n = int(np.prod(shape, dtype=np.int64)) if shape else 1
  k0, k1 = jax_random_key(int(fill.get("seed", 0)), fill.get("split", ()))
  j = np.arange(n, dtype=np.uint64)
  hi, lo = threefry2x32(k0, k1, (j >> np.uint64(32)).astype(np.uint32),
                        (j & np.uint64(0xFFFFFFFF)).astype(np.uint32))
  return jax_random_draw(hi ^ lo, dtype).reshape(shape)


def jax_random_draw(bits: np.ndarray, dtype: str) -> np.ndarray:
  """The elements of `dtype` that jax.random.uniform / jax.random.bits make of the 32-bit
  threefry outputs `bits` (hi ^ lo)."""
  if dtype == "uint32":
    return bits
  if dtype == "uint16":
    return bits.astype(np.uint16)
  if dtype == "uint8":
    return bits.astype(np.uint8)
  if dtype == "float32":  # top 23 bits under 1.0's exponent, minus 1 (exact)
    return ((bits >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)
  if dtype == "float16":  # 16 bits drawn, the top 10 the mantissa
    return (((bits & np.uint32(0xFFFF)) >> np.uint32(6)).astype(np.float64) / 1024.0).astype(np.float16)
  # bfloat16: 8 bits drawn (its 7-bit mantissa is under 8), the top 7 the mantissa
  return (((bits & np.uint32(0xFF)) >> np.uint32(1)).astype(np.float64) / 128.0).astype(
      numpy_dtype("bfloat16"))


def fill_values(fill: dict | None, dtype: str, n: int) -> np.ndarray:
  """The small integers v (int64) of the first `n` elements of an array with this fill."""
  fill = fill or {"pattern": "iota"}
  lo, hi = value_range(dtype)
  span = hi - lo + 1
  pattern = fill.get("pattern", "iota")
  if pattern == "iota":
    i = np.arange(n, dtype=np.int64)
    v = lo + np.mod(i + 1 - lo, span)
    v = np.where(v == 0, 1 if hi > 0 else -1, v)
    return v.astype(np.int64)
  if pattern == "random":
    seed = int(fill.get("seed", 0)) & _MASK64
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
      mixed = np.uint64(seed) ^ (i * np.uint64(0xD1B54A32D192ED03))
    r = _splitmix64_vec(mixed)
    return (lo + (r % np.uint64(span)).astype(np.int64)).astype(np.int64)
  if pattern == "constant":
    value = int(fill.get("value", 0))
    return np.full(n, min(max(value, lo), hi), dtype=np.int64)
  if pattern == "arange":  # the case reader keeps every element inside [lo, hi]
    start, step = int(fill.get("start", 0)), int(fill.get("step", 1))
    return start + step * np.arange(n, dtype=np.int64)
  if pattern in ("values", "jax_random"):
    raise ValueError(f"a {pattern} fill holds numbers, not small integers: use fill_array")
  raise ValueError(f"unknown fill pattern {pattern!r}")


def explicit_array(values, dtype: str, shape) -> np.ndarray:
  """An explicit `values` fill: the numbers (row-major), each exactly a value of `dtype`."""
  shape = tuple(int(d) for d in shape)
  n = int(np.prod(shape, dtype=np.int64)) if shape else 1
  if len(values) != n:
    raise ValueError(f"a values fill of {len(values)} numbers for {n} elements")
  if dtype in _FLOATS:
    arr = np.asarray(values, dtype=np.float64).astype(numpy_dtype(dtype))
  elif dtype in ("int4", "uint4"):
    arr = np.asarray(values, dtype=np.int8 if dtype == "int4" else np.uint8).astype(numpy_dtype(dtype))
  else:
    arr = np.asarray(values, dtype=np.dtype(dtype))
  return arr.reshape(shape)


def numpy_dtype(dtype: str) -> np.dtype:
  """The numpy (ml_dtypes) dtype JAX uses for a collfuzz dtype name."""
  if dtype in ("int4", "uint4", "float8_e4m3fn", "float8_e5m2", "bfloat16"):
    import ml_dtypes  # pylint: disable=import-outside-toplevel
    return np.dtype(getattr(ml_dtypes, dtype))
  return np.dtype(dtype)


def values_to_array(v: np.ndarray, dtype: str, shape) -> np.ndarray:
  """Small integers -> an array of `dtype` holding them exactly."""
  if dtype in _FLOATS:
    arr = v.astype(np.float64).astype(numpy_dtype(dtype)) if dtype != "float32" else v.astype(np.float32)
  elif dtype in ("int4", "uint4"):
    arr = v.astype(np.int8 if dtype == "int4" else np.uint8).astype(numpy_dtype(dtype))
  else:
    # astype from int64 wraps modulo 2^bits, which is the C++ `v & mask`.
    arr = v.astype(np.dtype(dtype))
  return arr.reshape(tuple(shape))


def fill_array(spec: dict) -> np.ndarray:
  """The contents of a GMEM input: a numpy array of its dtype and shape."""
  shape = tuple(int(d) for d in spec["shape"])
  n = int(np.prod(shape, dtype=np.int64)) if shape else 1
  fill = spec.get("fill") or {"pattern": "iota"}
  if fill.get("pattern") == "values":
    return explicit_array(fill.get("values", []), spec["dtype"], shape)
  if fill.get("pattern") == "jax_random":
    return jax_random_array(fill, spec["dtype"], shape)
  v = fill_values(fill, spec["dtype"], n)
  return values_to_array(v, spec["dtype"], shape)


def pack(arr: np.ndarray, dtype: str, pad_nibble: int = 0) -> bytes:
  """Logical row-major bytes of an array; int4/uint4 two per byte, low nibble first.

  With an odd number of 4-bit elements the high nibble of the last byte is not an element; it
  holds `pad_nibble` (0 for GMEM arrays, as harness/core/fill.cpp writes them; the sentinel's
  high nibble 0xA for SMEM buffers, whose bytes all start as 0xA5 in the C++ model).
  """
  flat = np.ascontiguousarray(arr).reshape(-1)
  if DTYPE_BITS[dtype] == 4:
    nib = flat.view(np.uint8) & np.uint8(0xF)
    if nib.size % 2:
      nib = np.concatenate([nib, np.full(1, pad_nibble & 0xF, np.uint8)])
    return (nib[0::2] | (nib[1::2] << np.uint8(4))).astype(np.uint8).tobytes()
  out = flat.tobytes()
  if np.little_endian:
    return out
  return flat.byteswap().tobytes()  # pragma: no cover (big-endian hosts)


def fill_bytes(spec: dict) -> bytes:
  return pack(fill_array(spec), spec["dtype"])


def sentinel_array(shape, dtype: str, byte: int = SMEM_SENTINEL) -> np.ndarray:
  """An array of `dtype` whose packed bytes are all `byte`."""
  shape = tuple(int(d) for d in shape)
  n = int(np.prod(shape, dtype=np.int64)) if shape else 1
  np_dtype = numpy_dtype(dtype)
  if DTYPE_BITS[dtype] == 4:
    lo, hi = byte & 0xF, byte >> 4
    nib = np.empty(n, np.uint8)
    nib[0::2] = lo
    nib[1::2] = hi
    if dtype == "int4":
      signed = np.where(nib >= 8, nib.astype(np.int16) - 16, nib.astype(np.int16)).astype(np.int8)
      return signed.astype(np_dtype).reshape(shape)
    return nib.astype(np_dtype).reshape(shape)
  raw = np.full(n * np_dtype.itemsize, byte, dtype=np.uint8)
  return raw.view(np_dtype).reshape(shape)


def fnv1a64(data: bytes) -> str:
  """The digest harness/core/outcome_json.cpp writes: "fnv1a64:%016x"."""
  h = 0xCBF29CE484222325
  for b in data:
    h = ((h ^ b) * 0x100000001B3) & _MASK64
  return f"fnv1a64:{h:016x}"
