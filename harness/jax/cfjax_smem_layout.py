"""SMEM transforms (tiling, swizzle) of a case's SMEM allocation, and the physical layout they give.

An SMEM allocation may carry `"transforms": [{"tiling": [t0, ...]}, {"swizzle": S}]` (either left
out; tiling first: JAX's order, `plgpu.SMEM(shape, dtype, transforms=(plgpu.TilingTransform(t),
plgpu.SwizzleTransform(S)))`). collfuzz outcomes report an SMEM buffer's `hex` as its PHYSICAL
bytes, the buffer as the hardware lays it out:

* tiling (t_0..t_{k-1}) of the trailing k dims (d_0..d_{k-1}): the tiled shape is
  (leading..., d_0/t_0, ..., d_{k-1}/t_{k-1}, t_0, ..., t_{k-1}); logical element
  (..., i_0, ..., i_{k-1}) is element (..., i_0 // t_0, ..., i_{k-1} // t_{k-1}, i_0 % t_0, ...,
  i_{k-1} % t_{k-1}) of that shape, row-major (JAX's TilingTransform.transform_type);
* swizzle S bytes: the byte at offset o (of the tiled, row-major buffer) lies at
  o ^ (((o >> 7) % (S // 16)) << 4). That is Mosaic GPU's own formula (jax/experimental/mosaic/gpu/
  fragmented_array.py: `swizzle_group = (offset // 128) % (swizzle // 16); offset ^= swizzle_group
  * 16`, in bytes; CUTLASS's Swizzle<log2(S/16), 4, 3>). Offsets are the buffer's own (Pallas
  aligns every SMEM buffer to 1024 bytes, a multiple of the pattern's period, 128 * S / 16 bytes);
  jax-ir applies it to offsets into the CTA's dynamic SMEM, as the TMA unit does to addresses.

Without transforms the physical layout is row-major (the logical one). JAX's GPU interpret mode
allocates every buffer at its logical shape and drops the transforms on access
(interpret/gpu_callbacks.py `_remove_noop_transforms`), so its snapshots are logical and are
converted here (`physical_bytes`); jax-ir's SMEM is physical already.

A copy's SMEM side may be viewed transposed (`"transpose": [p0, ...]`, copy_transpose): that is
a view of the ref, not a layout of the allocation; nothing here changes with it.

Needs numpy only (cfjax_fill packs the elements), no JAX.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import cfjax_fill
from cfjax_case import CaseError

SWIZZLES = (32, 64, 128)


def transforms_of(alloc: dict, path: str = "$") -> tuple[tuple[int, ...] | None, int | None]:
  """An SMEM allocation's `transforms` -> (tiling or None, swizzle bytes or None); CaseError on
  anything but up to two objects, `{"tiling": [ints >= 1]}` then `{"swizzle": S}`, S an integer
  >= 1. Values JAX refuses (a swizzle other than 32, 64, 128; a tiling that does not divide the
  shape) are read as they are, so that the translation hands them to JAX and JAX raises its own
  error (as the C++ parser, which leaves them to the reference's rules); the layout functions
  below refuse them (a kernel JAX ran has none)."""
  t = alloc.get("transforms")
  if t is None:
    return None, None
  if not isinstance(t, list) or len(t) > 2:
    raise CaseError(f"{path}.transforms: expected a list of at most two transforms, got {t!r}")
  tiling = swizzle = None
  for k, x in enumerate(t):
    where = f"{path}.transforms[{k}]"
    if not isinstance(x, dict) or len(x) != 1:
      raise CaseError(f"{where}: expected {{\"tiling\": [...]}} or {{\"swizzle\": S}}, got {x!r}")
    if "tiling" in x:
      v = x["tiling"]
      if tiling is not None or swizzle is not None:
        raise CaseError(f"{where}: a tiling comes first, once (JAX's order: tiling, then swizzle)")
      if not isinstance(v, list) or not v or any(
          isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in v):
        raise CaseError(f"{where}.tiling: expected a list of integers >= 1, got {v!r}")
      tiling = tuple(v)
    elif "swizzle" in x:
      v = x["swizzle"]
      if swizzle is not None:
        raise CaseError(f"{where}: a second swizzle")
      if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise CaseError(f"{where}.swizzle: expected an integer >= 1 (JAX takes 32, 64 or 128), "
                        f"got {v!r}")
      swizzle = int(v)
    else:
      raise CaseError(f"{where}: unknown transform {next(iter(x))!r} (tiling, swizzle)")
  return tiling, swizzle


def has_transforms(alloc: dict) -> bool:
  return transforms_of(alloc) != (None, None)


def tiled_shape(shape, tiling) -> tuple[int, ...]:
  """The shape JAX allocates for `shape` tiled by `tiling` (TilingTransform.transform_type)."""
  shape = tuple(int(d) for d in shape)
  if not tiling:
    return shape
  k = len(tiling)
  if k > len(shape) or any(d % t for d, t in zip(shape[-k:], tiling)):
    raise CaseError(f"the tiling {list(tiling)} does not divide the trailing dims of {list(shape)}")
  lead, tail = shape[:-k], shape[-k:]
  return (*lead, *(d // t for d, t in zip(tail, tiling)), *tiling)


def physical_shape(alloc: dict) -> tuple[int, ...]:
  """The shape an SMEM allocation has in SMEM (its tiled shape, or its shape)."""
  tiling, _ = transforms_of(alloc)
  return tiled_shape(alloc["shape"], tiling)


def _checked(swizzle: int | None) -> int | None:
  if swizzle and swizzle not in SWIZZLES:
    raise CaseError(f"a swizzle of {swizzle} bytes has no layout (JAX takes 32, 64 or 128)")
  return swizzle


def swizzle_offset(offset: int, swizzle: int | None) -> int:
  """Where byte `offset` lies under a swizzle of `swizzle` bytes (None: unchanged): Mosaic GPU's
  `offset ^ ((offset // 128) % (swizzle // 16)) * 16`. An involution: applied twice, the offset."""
  if not _checked(swizzle):
    return offset
  return offset ^ (((offset >> 7) % (swizzle // 16)) << 4)


def swizzle_array(n: int, swizzle: int | None, base: int = 0) -> np.ndarray:
  """int64[n]: swizzle_offset(base + o) - base for o in 0..n-1."""
  o = np.arange(base, base + n, dtype=np.int64)
  if _checked(swizzle):
    o = o ^ (((o >> 7) % (swizzle // 16)) << 4)
  return o - base


def element_offset(index, shape, itemsize: float, tiling=None, swizzle=None) -> int:
  """The physical byte offset of logical element `index` of a buffer of logical `shape` whose
  elements are `itemsize` bytes (a whole number for the dtypes one can tile and swizzle)."""
  shape = tuple(int(d) for d in shape)
  index = tuple(int(i) for i in index)
  if tiling:
    k = len(tiling)
    lead, tail = index[:-k], index[-k:]
    index = (*lead, *(i // t for i, t in zip(tail, tiling)), *(i % t for i, t in zip(tail, tiling)))
  flat = int(np.ravel_multi_index(index, tiled_shape(shape, tiling))) if shape else 0
  return swizzle_offset(int(flat * itemsize), swizzle)


def tile_elements(logical: np.ndarray, tiling) -> np.ndarray:
  """The elements of a logical buffer in their tiled order (an array of the tiled shape)."""
  if not tiling:
    return logical
  shape = logical.shape
  k = len(tiling)
  lead, tail = shape[:-k], shape[-k:]
  split = [x for d, t in zip(tail, tiling) for x in (d // t, t)]
  a = logical.reshape(*lead, *split)
  n = len(lead)
  perm = list(range(n)) + [n + 2 * j for j in range(k)] + [n + 2 * j + 1 for j in range(k)]
  return a.transpose(perm)


def unswizzle_bytes(physical: bytes, swizzle: int | None) -> bytes:
  """The row-major (tiled) bytes of a swizzled buffer (the inverse of swizzle_bytes)."""
  return swizzle_bytes(physical, swizzle)  # the swizzle is an involution


def swizzle_bytes(data: bytes, swizzle: int | None) -> bytes:
  """The bytes of a row-major buffer as a swizzle of `swizzle` bytes lays them out:
  out[swizzle_offset(o)] = data[o]. The buffer is a whole number of swizzle rows (S bytes; JAX's
  SwizzleTransform makes the trailing dim exactly S bytes), so every offset stays inside it."""
  if not _checked(swizzle):
    return bytes(data)
  n = len(data)
  if n % swizzle:
    raise CaseError(f"a swizzled buffer of {n} bytes is not a whole number of {swizzle}-byte rows")
  src = np.frombuffer(bytes(data), np.uint8)
  out = np.empty_like(src)
  out[swizzle_array(n, swizzle)] = src
  return out.tobytes()


def physical_bytes(logical: Any, alloc: dict, pad_nibble: int = 0) -> bytes:
  """The physical bytes (cfjax_fill.pack of the elements in tiled order, then swizzled) of a
  logical buffer `logical` (an array of the allocation's logical shape) of SMEM allocation
  `alloc`."""
  tiling, swizzle = transforms_of(alloc)
  arr = np.asarray(logical)
  if tiling:
    arr = np.ascontiguousarray(tile_elements(arr.reshape(tuple(int(d) for d in alloc["shape"])),
                                             tiling))
  data = cfjax_fill.pack(arr, alloc["dtype"], pad_nibble=pad_nibble)
  return swizzle_bytes(data, swizzle)


def jax_transforms(alloc: dict) -> tuple:
  """The allocation's transforms as JAX objects, in JAX's order (tiling, then swizzle)."""
  from jax.experimental.pallas import mosaic_gpu as plgpu  # pylint: disable=import-outside-toplevel
  tiling, swizzle = transforms_of(alloc)
  out = []
  if tiling:
    out.append(plgpu.TilingTransform(tuple(tiling)))
  if swizzle:
    out.append(plgpu.SwizzleTransform(int(swizzle)))
  return tuple(out)


def transforms_src(alloc: dict) -> str:
  """The allocation's transforms as Python source (`collfuzz repro`), '' without any."""
  tiling, swizzle = transforms_of(alloc)
  parts = []
  if tiling:
    parts.append(f"plgpu.TilingTransform({tuple(tiling)!r})")
  if swizzle:
    parts.append(f"plgpu.SwizzleTransform({int(swizzle)})")
  if not parts:
    return ""
  return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def copy_transpose(use: dict, path: str = "$") -> tuple[tuple[int, ...] | None, bool]:
  """The SMEM side of a copy (a copy_gmem_to_smem's `dst`, a copy_smem_to_gmem's `src`) ->
  (its `transpose` as a tuple, None without one; whether `transpose_ref` is true).
  `"transpose": [p0, ...]` is `REF.transpose((p0, ...))`, REF the indexed SMEM ref (after its
  `index`: `smem.at[1].transpose((1, 0))`); with `"transpose_ref": true` it is the deprecated
  `plgpu.transpose_ref(REF, (p0, ...))`. The view is R.transpose(p), R the indexed ref: a copy of
  a GMEM slice S into it sets R to S.transpose(argsort(p)); a store from it writes its elements
  into the whole GMEM slice (as an untransposed store: cfjax_case.written_ranges is unchanged).
  The permutation is handed to JAX as it is (one JAX refuses raises JAX's own error); CaseError
  naming the field for anything but a list of integers, or a `transpose_ref` that is not a
  boolean or comes without a `transpose`."""
  perm = use.get("transpose")
  spelt_ref = use.get("transpose_ref", False)
  if not isinstance(spelt_ref, bool):
    raise CaseError(f"{path}.transpose_ref: expected a boolean, got {spelt_ref!r}")
  if perm is None:
    if spelt_ref:
      raise CaseError(f"{path}.transpose_ref: only with a `transpose`")
    return None, False
  if not isinstance(perm, list) or not all(
      isinstance(p, int) and not isinstance(p, bool) for p in perm):
    raise CaseError(f"{path}.transpose: expected a permutation of the indexed ref's dims (a "
                    f"list of integers), got {perm!r}")
  return tuple(perm), spelt_ref


def buffer_bytes(alloc: dict) -> int:
  """An SMEM allocation's size in bytes (the elements packed; the transforms move them only)."""
  n = math.prod(int(d) for d in alloc["shape"])
  return (n * cfjax_fill.DTYPE_BITS[alloc["dtype"]] + 7) // 8
