"""jax-ir's bulk copy engine: TMA tensor loads (`tma_load`: the box gathered from GMEM through a
TMA descriptor, out-of-bounds elements zero, written to the destination CTA(s), multicast and
cta_group::2 pairs included) and plain bulk loads (`bulk_load`), each completing its bytes on an
mbarrier at issue time (docs/outcome-format.md, execution model); TMA tensor stores (`tma_store`:
`cp.async.bulk.tensor...global.shared::cta`, a copy_smem_to_gmem from a tiled or swizzled SMEM
ref) and reducing TMA stores (`tma_reduce`: `cp.reduce.async.bulk.tensor`, copy_smem_to_gmem's
`reduction_op`), which write or combine the issuing CTA's SMEM box into GMEM at issue time; and
cluster launch control's try_cancel response (`try_cancel`), multicast to every CTA of the
cluster with its complete_tx.

Swizzle (the descriptor's 32, 64 or 128; 16 is none): the box is laid out row-major (the
descriptor's dims, innermost last) from the SMEM address, and each of its bytes then lies at that
address swizzled, `a ^ (((a >> 7) % (S // 16)) << 4)`, `a` the offset into the CTA's dynamic SMEM
(cfjax_smem_layout.swizzle_offset, Mosaic GPU's own formula). A tiling needs nothing here: Mosaic
encodes it in the descriptor's dims and strides (rank up to 5).
Used by the nvvm op family (cfjax_ir_ops_nvvm) and the inline PTX family (cfjax_ir_ops_ptx).
"""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np

from cfjax_ir_core import Machine, signed
from cfjax_ir_extract import Undefined, Unsupported
from cfjax_smem_layout import swizzle_array


# mosaic_gpu_init_tma_desc's swizzle argument (mgpu_dialect.SwizzlingMode) -> the swizzle in bytes
# the SMEM side of a copy has (None: kNoSwizzle, 16).
_SWIZZLES = {16: None, 32: 32, 64: 64, 128: 128}


def _descriptor(self: Machine, desc_addr, coords):
  """The TMA descriptor at `desc_addr` and `coords` as signed box coordinates in the
  descriptor's dim order (PTX gives them innermost first); Unsupported for anything else."""
  d = self.tma.get(desc_addr)
  if d is None:
    raise Unsupported("TMA descriptor the host never initialised")
  if d.swizzle not in _SWIZZLES:
    raise Unsupported(f"TMA swizzle {d.swizzle}")
  coords = [signed(c, 32) for c in coords][::-1]
  if len(coords) != len(d.sizes):
    raise Unsupported("TMA rank")
  if len(coords) > 5:
    raise Unsupported(f"TMA rank {len(coords)} (the hardware's tensor maps have at most 5)")
  return d, coords


def _smem_positions(d, off: int, n: int, smem_len: int, what: str):
  """Where the n bytes of a box at SMEM offset `off` lie: off + k, each swizzled as the
  descriptor says (an int64 array); Unsupported past the end of SMEM."""
  swizzle = _SWIZZLES[d.swizzle]
  if swizzle and (n % swizzle or d.window[-1] * d.bits != swizzle * 8):
    # Mosaic checks it ("Async copies with swizzle=... require the last dimension of the slice
    # to be exactly ... bytes"): a box row is one swizzle row.
    raise Unsupported(f"TMA swizzle {swizzle} with a box row of {d.window[-1] * d.bits // 8} bytes")
  pos = off + swizzle_array(n, swizzle, base=off)
  if n and (int(pos.min()) < 0 or int(pos.max()) >= smem_len):
    raise Unsupported(f"TMA {what} past the end of SMEM")
  return pos


def tma_load(self: Machine, cta, dst, desc_addr, coords, bar, mask, bar_local, pair=False):
  d, coords = _descriptor(self, desc_addr, coords)
  rank = len(d.sizes)
  bits = d.bits
  window = d.window
  n = math.prod(window)
  nbytes = n * bits // 8
  if bits < 8 and (window[-1] * bits) % 8:
    raise Unsupported("sub-byte TMA box")
  _, data, _ = self.gmem_at(d.base)
  base_off = d.base - self.gmem_at(d.base)[0]
  esz = bits / 8
  # Gather the box row by row (rows along the minor dim).
  box = bytearray(int(nbytes))
  row_elems = window[-1]
  row_bytes = int(row_elems * esz)
  k = 0
  for idx in itertools.product(*(range(w) for w in window[:-1])):
    pos = [coords[j] + idx[j] for j in range(rank - 1)]
    inb = all(0 <= pos[j] < d.sizes[j] for j in range(rank - 1))
    for e in range(row_elems):
      c = coords[-1] + e
      if inb and 0 <= c < d.sizes[-1]:
        el = sum(pos[j] * d.strides[j] for j in range(rank - 1)) + c * d.strides[-1]
        if bits >= 8:
          b0 = base_off + int(el * esz)
          box[k + int(e * esz):k + int((e + 1) * esz)] = data[b0:b0 + int(esz)]
        else:
          byte = data[base_off + el // 2]
          nib = (byte >> (4 * (el % 2))) & 0xF
          tgt = k + e // 2
          box[tgt] |= nib << (4 * (e % 2))
    k += row_bytes
  if mask is None:
    targets = [cta]
  else:
    targets = [r for r in range(16) if (mask >> r) & 1]
    outside = [r for r in targets if r >= self.num_ctas]
    if outside:
      raise Undefined("multicast_outside_cluster",
                      f"a multicast to CTA {outside[0]} of a cluster of {self.num_ctas}")
  dr, doff = self.smem_of(cta, dst)
  br, boff = self.smem_of(cta, bar)
  for r in targets:
    t_dst = doff
    smem = self.smem[r if mask is not None else dr]
    if t_dst + len(box) > len(smem):
      raise Unsupported("TMA past the end of SMEM")
    if _SWIZZLES[d.swizzle]:
      _write_at(smem, _smem_positions(d, t_dst, len(box), len(smem), "load"), box)
    else:
      smem[t_dst:t_dst + len(box)] = box
    rb = r if mask is not None else br
    if pair:
      # cta_group::2: each destination's complete_tx goes to the mbarrier at that offset in the
      # CTA of the destination's pair that the mbarrier address selects (PTX ISA, cp.async.bulk.tensor).
      rb = (r & ~1) | (br & 1)
      if rb >= self.num_ctas:
        raise Unsupported("cta_group::2 pair past the cluster")
    b = self.bars[rb].get(boff)
    if b is None:
      raise Unsupported("mbarrier used before init")
    b.complete_tx(int(nbytes))


def bulk_load(self: Machine, cta, dst, src, nbytes, bar):
  base, data, _ = self.gmem_at(src)
  off = src - base
  dr, doff = self.smem_of(cta, dst)
  chunk = data[off:off + nbytes]
  if len(chunk) != nbytes:
    raise Unsupported("bulk copy past the end of a GMEM array")
  self.smem[dr][doff:doff + nbytes] = chunk
  br, boff = self.smem_of(cta, bar)
  self.bars[br][boff].complete_tx(nbytes)


def try_cancel(self: Machine, cta, result, bar):
  """`clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
  .multicast::cluster::all.b128 [result], [bar]` (plgpu.try_cluster_cancel): the 16-byte response
  is written at the result's SMEM offset in every CTA of the cluster, each completing 16 bytes of
  tx on the mbarrier at the barrier's offset in that CTA, at issue time (PTX ISA,
  clusterlaunchcontrol.try_cancel). The response is zeros, one that says "not canceled": on
  hardware its contents depend on timing, and the reference leaves them undefined."""
  _, roff = self.smem_of(cta, result)
  _, boff = self.smem_of(cta, bar)
  for r in range(self.num_ctas):
    smem = self.smem[r]
    if roff + 16 > len(smem):
      raise Unsupported("try_cancel response past the end of SMEM")
    smem[roff:roff + 16] = bytes(16)
    b = self.bars[r].get(boff)
    if b is None:
      raise Unsupported("mbarrier used before init")
    b.complete_tx(16)


# ---- reducing TMA stores (cp.reduce.async.bulk.tensor)

# TMA dtype code (cfjax_ir_core.TmaDesc.dtype) -> (bits, signed) for the integer types a reduction
# takes: U32, U64, and S32, S64 (launch_context._tma_dma_type gives these to smin/smax only).
_REDUCE_INTS = {3: (32, False), 4: (64, False), 9: (32, True), 10: (64, True)}
# -> (numpy dtype, unsigned view, the NaN the result gets) for the float types.
_REDUCE_FLOATS = {5: (np.float16, np.uint16, 0x7FFF), 6: (np.float32, np.uint32, 0x7FFFFFFF),
                  7: (ml_dtypes.bfloat16, np.uint16, 0x7FFF)}


def _float_codec(code):
  dt, raw, nan = _REDUCE_FLOATS[code]

  def decode(bits):
    return np.array([bits], raw).view(dt)[0].astype(np.float32)  # exact: f16/bf16 in f32

  def encode(x):
    if np.isnan(x):
      return nan
    return int(np.array([x], np.float32).astype(dt).view(raw)[0])  # round to nearest even
  return decode, encode


def reduce_element(op: str, code):
  """f(old_bits, src_bits) -> new_bits, the element function of `cp.reduce.async.bulk.tensor`'s
  `.op` (the PTX text's add/min/max/inc/dec/and/or/xor) on the descriptor's dtype code; JAX's
  umin/umax and smin/smax are min/max on a U32/U64 or an S32/S64 descriptor. A pair JAX never
  emits (launch_context._is_tma_reduction_op_supported) is Unsupported."""
  if code in _REDUCE_INTS:
    bits, is_signed = _REDUCE_INTS[code]
    mask = (1 << bits) - 1
    key = (lambda v: signed(v, bits)) if is_signed else (lambda v: v)
    if op == "add":  # wraps modulo 2**bits (JAX adds i64 as u64: the same bits)
      return lambda a, b: (a + b) & mask
    if op == "min":
      return lambda a, b: a if key(a) <= key(b) else b
    if op == "max":
      return lambda a, b: a if key(a) >= key(b) else b
    if op == "and":
      return lambda a, b: a & b
    if op == "or":
      return lambda a, b: a | b
    if op == "xor":
      return lambda a, b: a ^ b
    if code == 3 and op == "inc":  # unsigned 32-bit: old >= src ? 0 : old + 1
      return lambda a, b: 0 if a >= b else a + 1
    if code == 3 and op == "dec":  # unsigned 32-bit: (old == 0 || old > src) ? src : old - 1
      return lambda a, b: b if a == 0 or a > b else a - 1
  elif code in _REDUCE_FLOATS:
    decode, encode = _float_codec(code)
    if op == "add":
      def fadd(a, b):
        # The sum rounded once to nearest even: f32 adds exactly that; for f16 and bf16 the f32
        # sum, rounded again, is the same (f32 has more than twice their precision plus 2 bits).
        with np.errstate(all="ignore"):
          return encode(np.float32(decode(a) + decode(b)))
      return fadd
    if op in ("min", "max") and code in (5, 7):
      def fminmax(a, b):
        x, y = decode(a), decode(b)
        if np.isnan(x) or np.isnan(y):  # a NaN operand yields the other; two yield the NaN
          return b if np.isnan(x) and not np.isnan(y) else (a if not np.isnan(x) else encode(x))
        if x == y:  # +0 and -0: -0 is the smaller
          neg_a = bool(a >> 15)
          return (a if neg_a else b) if op == "min" else (b if neg_a else a)
        return a if (x < y) == (op == "min") else b
      return fminmax
  raise Unsupported(f"ptx cp.reduce.async.bulk.tensor .{op} on TMA dtype {code}")


def _write_at(smem: bytearray, pos, data: bytes):
  """smem[pos[k]] = data[k] for every k."""
  view = np.frombuffer(smem, np.uint8)
  view[pos] = np.frombuffer(bytes(data), np.uint8)


def _read_box(self: Machine, cta, src, d, what: str) -> bytes:
  """The box's bytes (row-major, the descriptor's dims) read from the issuing CTA's SMEM at `src`,
  each byte from its swizzled offset."""
  esz = d.bits // 8
  if d.bits < 8:
    raise Unsupported(f"sub-byte TMA {what}")
  sr, soff = self.smem_of(cta, src)
  smem = self.smem[sr]
  n = math.prod(d.window) * esz
  if soff + n > len(smem):
    raise Unsupported(f"TMA {what} past the end of SMEM")
  if not _SWIZZLES[d.swizzle]:
    return bytes(smem[soff:soff + n])
  pos = _smem_positions(d, soff, n, len(smem), what)
  return np.frombuffer(smem, np.uint8)[pos].tobytes()


def _scatter_box(self: Machine, cta, src, desc_addr, coords, f, what: str):
  """Every in-bounds element of the descriptor's box at `coords` (PTX order, innermost first)
  becomes f(old, SMEM element) (their bits as unsigned integers) at issue time; elements out of
  bounds are not written."""
  d, coords = _descriptor(self, desc_addr, coords)
  rank = len(d.sizes)
  esz = d.bits // 8
  box = _read_box(self, cta, src, d, what)
  base, data, _ = self.gmem_at(d.base)
  base_off = d.base - base
  for k, idx in enumerate(itertools.product(*(range(w) for w in d.window))):
    pos = [coords[j] + idx[j] for j in range(rank)]
    if not all(0 <= pos[j] < d.sizes[j] for j in range(rank)):
      continue
    g = base_off + sum(pos[j] * d.strides[j] for j in range(rank)) * esz
    if g < 0 or g + esz > len(data):
      raise Unsupported(f"TMA {what} past the end of a GMEM array")
    s_at = k * esz
    old = int.from_bytes(data[g:g + esz], "little")
    new = int.from_bytes(box[s_at:s_at + esz], "little")
    data[g:g + esz] = f(old, new).to_bytes(esz, "little")


def tma_reduce(self: Machine, cta, src, desc_addr, coords, op: str):
  """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group [desc, coords],
  [src]`: every in-bounds element of the descriptor's box at `coords` (PTX order, innermost
  first) becomes op(old, SMEM element) at issue time; elements out of bounds are not written."""
  d, _ = _descriptor(self, desc_addr, coords)
  _scatter_box(self, cta, src, desc_addr, coords, reduce_element(op, d.dtype), "reduce")


def tma_store(self: Machine, cta, src, desc_addr, coords):
  """`cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [desc, coords], [src]` (the nvvm
  op `cp.async.bulk.tensor.global.shared.cta`): the issuing CTA's SMEM box written to the
  in-bounds elements of the descriptor's box at `coords` at issue time (every store completes at
  issue, as the bulk store does); elements out of bounds are not written."""
  _scatter_box(self, cta, src, desc_addr, coords, lambda old, new: new, "store")
