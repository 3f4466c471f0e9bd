"""jax-ir's bulk copy engine: TMA tensor loads (`tma_load`: the box gathered from GMEM through a
TMA descriptor, out-of-bounds elements zero, written to the destination CTA(s), multicast and
cta_group::2 pairs included) and plain bulk loads (`bulk_load`), each completing its bytes on an
mbarrier at issue time (docs/outcome-format.md, execution model).
Used by the nvvm op family (cfjax_ir_ops_nvvm) and the inline PTX family (cfjax_ir_ops_ptx).
"""

from __future__ import annotations

import itertools
import math

from cfjax_ir_core import Machine, signed
from cfjax_ir_extract import Undefined, Unsupported


def tma_load(self: Machine, cta, dst, desc_addr, coords, bar, mask, bar_local, pair=False):
  d = self.tma.get(desc_addr)
  if d is None:
    raise Unsupported("TMA descriptor the host never initialised")
  if d.swizzle != 16:
    raise Unsupported(f"TMA swizzle {d.swizzle}")
  rank = len(d.sizes)
  coords = [signed(c, 32) for c in coords][::-1]  # PTX: innermost first
  if len(coords) != rank:
    raise Unsupported("TMA rank")
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
