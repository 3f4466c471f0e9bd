"""jax-ir's inline PTX: `llvm.inline_asm`, whose asm string (whitespace normalised) is matched
against the PTX statements Mosaic GPU emits. Modelled: no-op fences, prefetches and bulk-group
commits (`cp.async.bulk.commit_group`: every store completes at issue), the empty
optimization barrier on accumulator registers, named warpgroup barriers, cluster barrier
arrive/wait, mbarrier init / arrive (expect_tx) / complete_tx, a remote arrive through mapa, TMA
tensor loads (0.12's inline form, multicast and cta_group::2; through cfjax_ir_tma), cluster
launch control's `clusterlaunchcontrol.try_cancel` (cfjax_ir_tma.try_cancel), mapa, bulk
GMEM stores, reducing TMA stores (`cp.reduce.async.bulk.tensor`, cfjax_ir_tma.tma_reduce) and bulk
loads, and the `max`/`min` of FragmentedArray.max/min (`max.NaN.f32`, `max.NaN.f16`/`.f16x2`,
`.bf16`/`.bf16x2`, `max.s16`/`.u16`/`.s16x2`/`.u16x2` and the same `min`s: a vector_store's
jnp.maximum/minimum, cfjax_ir_ops_vector.min_max_bits), and blocks of 32-bit register arithmetic
(`prmt`, `and`, `sub.bf16x2`, ...: the int8 -> bfloat16 conversion; cfjax_ir_ptx_alu). Any other
string raises Unsupported("ptx ...").
Registers into cfjax_ir_core.OPS: llvm.inline_asm.
"""

from __future__ import annotations

import json
import re

import cfjax_ir_tma
from cfjax_ir_core import CLUSTER_SHIFT, Compiler, Mbarrier, lane, lift, register, signed
from cfjax_ir_extract import Undefined, Unsupported
from cfjax_ir_ops_vector import min_max_bits, scalar_bits
from cfjax_ir_ptx_alu import alu_block_step


@register("llvm.inline_asm")
def inline_asm(comp, op, ins, outs):
  asm = str(op.attributes["asm_string"])[1:-1]
  asm_n = re.sub(r"\\0A", "\n", asm)
  text = " ".join(asm_n.split())
  return ptx_step(comp, op, text, ins, outs)


_NOOP_PTX = {
    "fence.mbarrier_init.release.cluster;", "@$1 prefetch.tensormap [$0];",
    "wgmma.fence.sync.aligned;", "fence.proxy.async.shared::cta;",
    # plgpu.commit_smem_to_gmem_group(): groups stores that have completed at issue already.
    "cp.async.bulk.commit_group;",
}


# mgpu.utils.try_cluster_cancel: $0 the result's SMEM address, $1 the mbarrier's, $2 the predicate.
_TRY_CANCEL = ("@$2 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
               ".multicast::cluster::all.b128 [$0], [$1];")


def ptx_step(comp: Compiler, op, text: str, ins, outs):
  mach = comp.m
  simple = Compiler.simple

  if text in _NOOP_PTX:
    return None
  if text == "" and not any(str(r.type).startswith("!llvm.ptr") for r in op.results) and all(
      str(v.type).startswith(("vector<", "f", "i", "!llvm.struct<(f", "!llvm.struct<(i",
                              "!llvm.struct<(vector")) for v in op.operands):
    # An empty asm statement: an optimization barrier on accumulator registers (no effect), float
    # or integer (an int32 accumulator's registers are `=r`); its results carry no value here, so
    # an op that reads one is unavailable.
    def barrier(th):
      for o in outs:
        th.env[o] = None
    return simple(barrier)
  if text == "bar.sync $0, 128;":
    # A named barrier of one warpgroup's 128 threads: this warpgroup's own lanes.
    return None
  if text == "barrier.cluster.arrive.relaxed.aligned;":
    def arrive(th):
      th.cluster_gen = mach.cluster_gen
      mach.cluster_arrived += 1
      if mach.cluster_arrived == mach.num_ctas * mach.num_wgs:
        mach.cluster_arrived = 0
        mach.cluster_gen += 1
        # The cluster barriers JAX emits (kernel entry and exit) order nothing in the canonical
        # schedule: the warpgroup that releases one yields, so the next round starts from CTA 0.
        yield
    arrive.gen = True
    return arrive
  if text == "barrier.cluster.wait.aligned;":
    def wait(th):
      while mach.cluster_gen == th.cluster_gen:
        yield
    wait.gen = True
    return wait

  def pred_of(k):
    return ins[k]

  m = re.fullmatch(r"@\$2 mbarrier\.init\.shared::cta\.b64 \[\$0\], \$1;", text)
  if m:
    def init(th):
      for i in comp.pred_lanes(th, ins[2]):
        r, off = mach.smem_of(th.cta, lane(th.env[ins[0]], i))
        mach.bars[r][off] = Mbarrier(lane(th.env[ins[1]], i))
    return simple(init)
  m = re.fullmatch(r"(@\$(\d) )?mbarrier\.arrive(\.expect_tx)?\.release\.cta\.shared::cta\.b64 _, \[\$0\], \$1;", text)
  # BarrierRef.arrive(arrival_count=k) writes the count into the text: 1 from a warpgroup, 4 from
  # each lane of a warp (a barrier_arrive inside a warp_map: 32 lanes x 4 = one Pallas arrival).
  m1 = re.fullmatch(r"(@\$1 )?mbarrier\.arrive\.release\.cta\.shared::cta\.b64 _, \[\$0\], (\d+);", text)
  if m or m1:
    expect = bool(m and m.group(3))
    pred = None
    if m and m.group(2):
      pred = ins[int(m.group(2))]
    if m1 and m1.group(1):
      pred = ins[1]

    def arr(th):
      for i in comp.pred_lanes(th, pred):
        b = mach.bar(th.cta, lane(th.env[ins[0]], i))
        if expect:
          b.arrive(1, signed(lane(th.env[ins[1]], i), 32))
        elif m1:
          b.arrive(int(m1.group(2)), 0)
        else:
          b.arrive(lane(th.env[ins[1]], i), 0)
    return simple(arr)
  m = re.fullmatch(r"@\$2 mbarrier\.complete_tx\.shared::cta\.b64 \[\$0\], \$1;", text)
  if m:
    def ctx(th):
      for i in comp.pred_lanes(th, ins[2]):
        mach.bar(th.cta, lane(th.env[ins[0]], i)).complete_tx(signed(lane(th.env[ins[1]], i), 32))
    return simple(ctx)
  m = re.fullmatch(r"\{ \.reg \.b32 mapped_addr; @\$0 mapa\.shared::cluster\.u32 mapped_addr, \$1, \$2; "
                   r"@\$0 mbarrier\.arrive\.shared::cluster\.b64 _, \[mapped_addr\]; \}", text)
  if m:
    def remote(th):
      for i in comp.pred_lanes(th, ins[0]):
        addr, tgt = lane(th.env[ins[1]], i), lane(th.env[ins[2]], i)
        if tgt >= mach.num_ctas:
          raise Undefined("cluster_arrival_outside_cluster",
                          f"a cluster-barrier arrival on CTA {tgt} of a cluster of {mach.num_ctas}")
        mach.bars[tgt][addr].arrive(1, 0) if addr in mach.bars[tgt] else (_ for _ in ()).throw(
            Unsupported("mbarrier used before init"))
    return simple(remote)
  # TMA loads as inline PTX (0.12; cta_group::2 in both).
  m = re.fullmatch(
      r"(\{ \.reg \.b32 mapped_addr; @\$0 mapa\.shared::cluster\.u32 mapped_addr, \$3, 0; )?"
      r"@\$0 cp\.async\.bulk\.tensor\.(\d)d\.shared::(cta|cluster)\.global(\.tile)?"
      r"\.mbarrier::complete_tx::bytes(\.multicast::cluster)?(\.cta_group::2)? "
      r"\[\$1\], \[\$2, \{([$\d,]+)\}\], \[(\$3|mapped_addr)\](, \$(\d))?;( \})?", text)
  if m:
    rank = int(m.group(2))
    coord_ops = [int(x) for x in re.findall(r"\$(\d+)", m.group(7))]
    if len(coord_ops) != rank:
      raise Unsupported(f"ptx {text[:60]}")
    mapped = m.group(1) is not None
    cta_pair = m.group(6) is not None
    multicast = m.group(5) is not None
    mask_op = int(m.group(10)) if m.group(10) else None
    if multicast and mask_op is None:
      raise Unsupported(f"ptx {text[:60]}")

    def tma(th):
      for i in comp.pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        bar = get(3)
        if mapped:
          bar = ((0 + 1) << CLUSTER_SHIFT) | bar  # mapa to CTA 0 of the cluster
        mask = get(mask_op) if multicast else None
        cfjax_ir_tma.tma_load(mach, th.cta, get(1), get(2), [get(k) for k in coord_ops], bar, mask,
                              bar_local=not mapped, pair=cta_pair)
    return simple(tma)
  if text == _TRY_CANCEL:
    # plgpu.try_cluster_cancel (both semantics; Warpgroup's mosaic_gpu.try_cluster_cancel lowers
    # to the same statement): each issuing lane's 16-byte response multicast to every CTA.
    def try_cancel(th):
      for i in comp.pred_lanes(th, ins[2]):
        cfjax_ir_tma.try_cancel(mach, th.cta, lane(th.env[ins[0]], i), lane(th.env[ins[1]], i))
    return simple(try_cancel)
  if text == "mapa.shared::cluster.u32 $0, $1, $2;":
    def mapa(th):
      def f(addr, tgt):
        if tgt >= mach.num_ctas:
          raise Unsupported("mapa to a CTA past the cluster")
        return ((tgt + 1) << CLUSTER_SHIFT) | (addr & ((1 << CLUSTER_SHIFT) - 1))
      th.env[outs[0]] = lift(f, th.env[ins[0]], th.env[ins[1]])
    return simple(mapa)
  if text == "@$0 cp.async.bulk.global.shared::cta.bulk_group [$1], [$2], $3;":
    # copy_smem_to_gmem: a bulk store of $3 bytes (complete at issue, like every copy here).
    def store(th):
      for i in comp.pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        dst, src, n = get(1), get(2), get(3)
        base, data, _ = mach.gmem_at(dst)
        r, off = mach.smem_of(th.cta, src)
        if dst - base + n > len(data) or off + n > len(mach.smem[r]):
          raise Unsupported("bulk store past the end of an array")
        data[dst - base:dst - base + n] = mach.smem[r][off:off + n]
    return simple(store)
  m = re.fullmatch(r"@\$0 cp\.reduce\.async\.bulk\.tensor\.(\d)d\.global\.shared::cta\."
                   r"(add|min|max|inc|dec|and|or|xor)\.tile\.bulk_group "
                   r"\[\$2,\{([$\d,]+)\}\], \[\$1\];", text)
  if m:
    # copy_smem_to_gmem(..., reduction_op=...): a reducing TMA store of the issuing CTA's SMEM box
    # (complete at issue); umin/umax/smin/smax are min/max here, the descriptor's dtype signs them.
    rank, red = int(m.group(1)), m.group(2)
    coord_ops = [int(x) for x in re.findall(r"\$(\d+)", m.group(3))]
    if len(coord_ops) != rank:
      raise Unsupported(f"ptx {text[:60]}")

    def reduce_store(th):
      for i in comp.pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        cfjax_ir_tma.tma_reduce(mach, th.cta, get(1), get(2), [get(k) for k in coord_ops], red)
    return simple(reduce_store)
  m = re.fullmatch(r"@\$0 cp\.async\.bulk\.shared::cta\.global\.mbarrier::complete_tx::bytes \[\$1\], \[\$2\], \$3, \[\$4\];", text)
  if m:
    def bulk(th):
      for i in comp.pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        cfjax_ir_tma.bulk_load(mach, th.cta, get(1), get(2), get(3), get(4))
    return simple(bulk)
  m = re.fullmatch(r"(max|min)\.(NaN\.f32|NaN\.f16|NaN\.bf16|NaN\.f16x2|NaN\.bf16x2|s16|u16|s16x2|"
                   r"u16x2) \$0, \$1, \$2;", text)
  if m:
    # FragmentedArray.max/min (jnp.maximum/minimum in a vector_store): on f32 (`=f,f,f`), one
    # 16-bit element (`=h,h,h`: i16) or two packed (`=r,r,r`: i32), on the elements' bits.
    is_max, ty = m.group(1) == "max", m.group(2).replace("NaN.", "")
    want = {"f32": "f32"}.get(ty, "i32" if ty.endswith("x2") else "i16")
    if len(ins) != 2 or len(outs) != 1 or \
        any(str(v.type) != want for v in list(op.operands) + list(op.results)):
      raise Unsupported(f"ptx {text} on {[str(v.type) for v in op.operands]}")
    bits = 32 if want != "i16" else 16

    def f(a, b):
      if a is None or b is None:
        raise Unsupported(f"ptx {text} of an accumulator's value")
      return min_max_bits(is_max, ty, scalar_bits(a, want, bits), scalar_bits(b, want, bits))

    def min_max(th):
      th.env[outs[0]] = lift(f, th.env[ins[0]], th.env[ins[1]])
    return simple(min_max)
  block = alu_block_step(comp, op, text, ins, outs)
  if block is not None:
    return block
  raise Unsupported("ptx " + json.dumps(text[:80]))
