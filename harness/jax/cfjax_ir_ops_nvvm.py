"""jax-ir ops of the `nvvm` dialect: warp-level ops (elect.sync, shfl.sync idx), fences (no
effect: every copy completes at issue), mbarriers (init, arrive.expect_tx, arrive.nocomplete,
try_wait.parity, which
records the wait), the TMA tensor load and the TMA tensor store (through cfjax_ir_tma), mapa
(a peer CTA's shared::cluster address: `plgpu.cluster_ref`'s DSMEM reads), and ldmatrix /
stmatrix (a tiled, swizzled SMEM ref's 16-bit registers, warp by warp).
Registers into cfjax_ir_core.OPS: nvvm.elect.sync, shfl.sync, fence.proxy, tcgen05.fence, mapa,
wgmma.fence.aligned, cp.async.bulk.commit.group, cp.async.bulk.wait_group, mbarrier.init,
mbarrier.arrive.expect_tx, mbarrier.arrive.nocomplete, mbarrier.try_wait.parity,
cp.async.bulk.tensor.shared.cluster.global,
cp.async.bulk.tensor.global.shared.cta, ldmatrix, stmatrix.
The same effects written as inline PTX are cfjax_ir_ops_ptx's.
"""

from __future__ import annotations

import cfjax_ir_tma
from cfjax_ir_core import (CLUSTER_SHIFT, LANES, LV, Mbarrier, attrs, ints, lane, lift, loc_label,
                           register, signed, uniform)
from cfjax_ir_extract import Undefined, Unsupported


@register("nvvm.elect.sync")
def elect_sync(comp, op, ins, outs):
  o = outs[0]

  def step(th):
    mask = th.mask
    out = [0] * LANES
    for w in range(0, LANES, 32):
      for i in range(w, w + 32):
        if mask is None or mask[i]:
          out[i] = 1
          break
    th.env[o] = LV(out)
  return comp.simple(step)


@register("nvvm.shfl.sync")
def shfl_sync(comp, op, ins, outs):
  kind = str(op.attributes["kind"])
  if "idx" not in kind:
    raise Unsupported(f"op nvvm.shfl.sync {kind}")
  val, src, o = ins[1], ins[2], outs[0]

  def step(th):
    v, s = th.env[val], th.env[src]
    th.env[o] = lift(lambda i, s_: lane(v, (i // 32) * 32 + (s_ & 31)), LV(range(LANES)), s)
  return comp.simple(step)


@register("nvvm.mapa")
def mapa(comp, op, ins, outs):
  """`nvvm.mapa %p, %rank : !llvm.ptr<3> -> !llvm.ptr<7>` (0.11.2's get_cluster_ref, Lane and
  Warpgroup alike; 0.12.0.1 writes it as the inline PTX `mapa.shared::cluster.u32`,
  cfjax_ir_ops_ptx): the shared::cluster address of the same offset in CTA `rank` of the cluster,
  ((rank + 1) << CLUSTER_SHIFT) | offset, which vector.load / llvm.load read from that CTA's SMEM
  (Machine.smem_of). A generic pointer's mapa (`generic=True`) is not modelled."""
  src, dst = str(op.operands[0].type), str(op.results[0].type)
  if (src, dst) != ("!llvm.ptr<3>", "!llvm.ptr<7>"):
    raise Unsupported(f"op nvvm.mapa from {src} to {dst}")
  mach = comp.m
  low = (1 << CLUSTER_SHIFT) - 1
  p, r, o = ins[0], ins[1], outs[0]

  def f(addr, rank):
    rank = signed(rank, 32)
    if not 0 <= rank < mach.num_ctas:
      raise Unsupported("mapa to a CTA past the cluster")
    return ((rank + 1) << CLUSTER_SHIFT) | (addr & low)

  def step(th):
    th.env[o] = lift(f, th.env[p], th.env[r])
  return comp.simple(step)


@register("nvvm.fence.proxy", "nvvm.tcgen05.fence", "nvvm.wgmma.fence.aligned",
          "nvvm.cp.async.bulk.commit.group")
def fence(comp, op, ins, outs):
  return None


@register("nvvm.cp.async.bulk.wait_group")
def cp_async_bulk_wait_group(comp, op, ins, outs):
  # wait_smem_to_gmem(n), with or without wait_read_only (the `read` attribute: PTX
  # cp.async.bulk.wait_group.read n): copies complete at issue time (docs/outcome-format.md,
  # execution model), so no group is ever pending, whatever n.
  return None


@register("nvvm.mbarrier.init")
def mbarrier_init(comp, op, ins, outs):
  pred = ins[2] if len(ins) > 2 else None
  p, c = ins[0], ins[1]
  mach = comp.m

  def step(th):
    for i in comp.pred_lanes(th, pred):
      r, off = mach.smem_of(th.cta, lane(th.env[p], i))
      count = lane(th.env[c], i)
      if not 1 <= count <= (1 << 20) - 1:
        raise Undefined("mbarrier_init_count",
                        f"mbarrier.init with an arrival count of {count} (the range is 1 to 2^20 - 1)")
      mach.bars[r][off] = Mbarrier(count)
  return comp.simple(step)


@register("nvvm.mbarrier.arrive.expect_tx")
def mbarrier_arrive_expect_tx(comp, op, ins, outs):
  pred = ins[2] if len(ins) > 2 else None
  p, n = ins[0], ins[1]
  mach = comp.m

  def step(th):
    for i in comp.pred_lanes(th, pred):
      mach.bar(th.cta, lane(th.env[p], i)).arrive(1, signed(lane(th.env[n], i), 32))
    for o in outs:
      th.env[o] = 0
  return comp.simple(step)


@register("nvvm.mbarrier.arrive.nocomplete")
def mbarrier_arrive_nocomplete(comp, op, ins, outs):
  # BarrierRef.arrive(arrival_count, can_complete=False): each active lane arrives with `count`
  # (a warp-level copy's `arrive(3, can_complete=False)` before its `arrive_expect_tx`, JAX's
  # copy_gmem_to_smem under PrimitiveSemantics.Warp). PTX: undefined behaviour if the arrival
  # completes the current phase (run.mbarrier.nocomplete_completes). The lanes of the warps that
  # reach the op arrive together here, one order of the warps among those the reference searches.
  p, n = ins[0], ins[1]
  mach = comp.m

  def step(th):
    for i in comp.pred_lanes(th, None):
      b = mach.bar(th.cta, lane(th.env[p], i))
      count = signed(lane(th.env[n], i), 32)
      if b.pending - count <= 0 and b.tx == 0:
        raise Undefined("mbarrier_nocomplete_completes",
                        f"lane {i}'s no-complete arrival of {count} completes the phase of a "
                        f"barrier with {b.pending} hardware arrivals pending")
      b.arrive(count, 0)
    for o in outs:
      th.env[o] = 0
  return comp.simple(step)


@register("nvvm.mbarrier.try_wait.parity")
def mbarrier_try_wait_parity(comp, op, ins, outs):
  p, par = ins[0], ins[1]
  label = loc_label(str(op.location), comp.m.label_re)
  mach = comp.m

  def step(th):
    addr = uniform(th.env[p], "wait address")
    parity = uniform(th.env[par], "wait parity") & 1
    r, off = mach.smem_of(th.cta, addr)
    b = mach.bar(th.cta, addr)
    name = mach.barrier_name(r, off)
    # The phase the program waits for: its own count of waits on this barrier (Pallas flips a
    # parity bit per wait), advanced to the parity the instruction tests.
    key = (th.wg, r, off)
    phase = mach.wait_counts.get(key, 0)
    if (phase & 1) != parity:
      phase += 1
    mach.wait_counts[key] = phase + 1
    rec = None
    if label is not None and label < len(mach.op_paths):
      rec = {"thread": th.wg, "op": mach.op_paths[label], "barrier": name, "phase": max(phase, 0),
             "completed": False}
      mach.waits[th.cta].append(rec)
    while (b.phase & 1) == parity:
      yield
    if rec is not None:
      rec["completed"] = True
  step.gen = True
  return step


@register("nvvm.cp.async.bulk.tensor.shared.cluster.global")
def cp_async_bulk_tensor_shared_cluster_global(comp, op, ins, outs):
  n_attr = attrs(op)
  seg = ints(n_attr["operandSegmentSizes"])
  names = ["dst", "desc", "coords", "bar", "im2col", "mask", "cache", "pred"]
  if len(seg) != len(names):
    raise Unsupported("op nvvm.cp.async.bulk.tensor.shared.cluster.global (operand layout)")
  parts, k = {}, 0
  for nm, c in zip(names, seg):
    parts[nm] = ins[k:k + c]
    k += c
  if parts["im2col"] or parts["cache"]:
    raise Unsupported("op nvvm.cp.async.bulk.tensor.shared.cluster.global (im2col/cache hint)")
  for extra in n_attr:
    if extra not in ("operandSegmentSizes", "mode", "isCTAOnly", "group"):
      raise Unsupported(f"op nvvm.cp.async.bulk.tensor attribute {extra}")
  if "group" in n_attr:
    raise Unsupported("op nvvm.cp.async.bulk.tensor cta_group")
  mask = parts["mask"][0] if parts["mask"] else None
  pred = parts["pred"][0] if parts["pred"] else None
  mach = comp.m

  def step(th):
    for i in comp.pred_lanes(th, pred):
      get = lambda s: lane(th.env[s], i)  # noqa: E731
      m = get(mask) if mask is not None else None
      cfjax_ir_tma.tma_load(mach, th.cta, get(parts["dst"][0]), get(parts["desc"][0]),
                            [get(c) for c in parts["coords"]], get(parts["bar"][0]), m, bar_local=True)
  return comp.simple(step)


@register("nvvm.cp.async.bulk.tensor.global.shared.cta")
def cp_async_bulk_tensor_global_shared_cta(comp, op, ins, outs):
  """A TMA tensor store (copy_smem_to_gmem from a tiled or swizzled SMEM ref, both releases):
  the issuing CTA's SMEM box to the descriptor's box at the coordinates (cfjax_ir_tma.tma_store),
  for each active lane whose predicate holds."""
  n_attr = attrs(op)
  seg = ints(n_attr["operandSegmentSizes"])
  names = ["desc", "src", "coords", "cache", "pred"]
  if len(seg) != len(names):
    raise Unsupported("op nvvm.cp.async.bulk.tensor.global.shared.cta (operand layout)")
  parts, k = {}, 0
  for nm, c in zip(names, seg):
    parts[nm] = ins[k:k + c]
    k += c
  if parts["cache"]:
    raise Unsupported("op nvvm.cp.async.bulk.tensor.global.shared.cta (cache hint)")
  for extra, value in n_attr.items():
    if extra == "mode" and "tile" in str(value) and "scatter" not in str(value):
      continue
    if extra != "operandSegmentSizes":
      raise Unsupported(f"op nvvm.cp.async.bulk.tensor.global.shared.cta attribute {extra} "
                        f"{value}")
  pred = parts["pred"][0] if parts["pred"] else None
  mach = comp.m

  def step(th):
    for i in comp.pred_lanes(th, pred):
      get = lambda s: lane(th.env[s], i)  # noqa: E731
      cfjax_ir_tma.tma_store(mach, th.cta, get(parts["src"][0]), get(parts["desc"][0]),
                             [get(c) for c in parts["coords"]])
  return comp.simple(step)


# ---- ldmatrix / stmatrix: a tiled, swizzled SMEM ref's 16-bit registers (FragmentedArray.
# load_tiled / store_tiled with use_txmatrix, both releases, Lane and Warpgroup alike). Warp-wide
# (`.sync.aligned`): each warp moves `num` 8x8 matrices of 16-bit elements; lane 8 * i + r gives
# the address of row r of matrix i (16 bytes, 16-byte aligned, shared::cta), and lane 4 * r + c
# holds, in its register i, that matrix's elements (r, 2c) (low half) and (r, 2c + 1); with
# `layout = <col>` (PTX `.trans`) elements (2c, r) and (2c + 1, r) of the rows as addressed.

def _txmatrix_params(op):
  a = attrs(op)
  shape, elt = str(a.get("shape")), str(a.get("eltType"))
  layout = str(a.get("layout"))
  if (shape, elt) != ("#nvvm.ld_st_matrix_shape<m = 8, n = 8>",
                      "#nvvm.ld_st_matrix_elt_type<b16>"):
    raise Unsupported(f"op {op.name} {shape} {elt}")
  if layout not in ("#nvvm.mma_layout<row>", "#nvvm.mma_layout<col>"):
    raise Unsupported(f"op {op.name} layout {layout}")
  if str(op.operands[0].type) != "!llvm.ptr<3>":
    raise Unsupported(f"op {op.name} through {op.operands[0].type}")
  return layout == "#nvvm.mma_layout<col>"


def _txmatrix_warps(th, name):
  """The warps (first lane of each) that run a warp-wide op: every lane of a warp or none."""
  warps = []
  for w in range(0, LANES, 32):
    active = [th.mask is None or th.mask[i] for i in range(w, w + 32)]
    if all(active):
      warps.append(w)
    elif any(active):
      raise Unsupported(f"op {name} under a partial warp (.aligned: undefined)")
  return warps


def _txmatrix_rows(th, p, w, num, name):
  """(smem bytearray, offset) of each row's 16 bytes: rows[i][r] from lane w + 8 * i + r."""
  mach = th.mach
  rows = []
  for i in range(num):
    mat = []
    for r in range(8):
      addr = lane(th.env[p], w + 8 * i + r)
      if not isinstance(addr, int):
        raise Unsupported(f"op {name} of an undefined address")
      if addr >> CLUSTER_SHIFT:
        raise Unsupported(f"op {name} of a shared::cluster address")
      if addr % 16:
        raise Unsupported(f"op {name} of a row address {addr} not 16-byte aligned")
      data = mach.smem[th.cta]
      if addr + 16 > len(data):
        raise Unsupported(f"op {name} past the end of SMEM")
      mat.append((data, addr))
    rows.append(mat)
  return rows


@register("nvvm.ldmatrix")
def ldmatrix(comp, op, ins, outs):
  trans = _txmatrix_params(op)
  num = int(str(attrs(op)["num"]).split(":")[0])
  if num not in (1, 2, 4):
    raise Unsupported(f"op nvvm.ldmatrix num = {num}")
  rt = str(op.results[0].type)
  if rt != ("i32" if num == 1 else "!llvm.struct<(" + ", ".join(["i32"] * num) + ")>"):
    raise Unsupported(f"op nvvm.ldmatrix of {rt}")
  p, o = ins[0], outs[0]

  def elem(row, k):
    data, at = row
    return int.from_bytes(data[at + 2 * k:at + 2 * k + 2], "little")

  def step(th):
    out = [0 if num == 1 else (0,) * num] * LANES  # an inactive lane's value is never used
    for w in _txmatrix_warps(th, "nvvm.ldmatrix"):
      rows = _txmatrix_rows(th, p, w, num, "nvvm.ldmatrix")
      for t in range(32):
        r, c = t // 4, t % 4
        regs = []
        for i in range(num):
          if trans:
            lo, hi = elem(rows[i][2 * c], r), elem(rows[i][2 * c + 1], r)
          else:
            lo, hi = elem(rows[i][r], 2 * c), elem(rows[i][r], 2 * c + 1)
          regs.append(lo | (hi << 16))
        out[w + t] = regs[0] if num == 1 else tuple(regs)
    th.env[o] = LV(out)
  return comp.simple(step)


@register("nvvm.stmatrix")
def stmatrix(comp, op, ins, outs):
  trans = _txmatrix_params(op)
  p, regs = ins[0], ins[1:]
  num = len(regs)
  if num not in (1, 2, 4) or any(str(v.type) != "i32" for v in list(op.operands)[1:]):
    raise Unsupported(f"op nvvm.stmatrix of {num} registers")

  def step(th):
    for w in _txmatrix_warps(th, "nvvm.stmatrix"):
      rows = _txmatrix_rows(th, p, w, num, "nvvm.stmatrix")
      vals = []
      for k in regs:
        v = th.env[k]
        if v is None or any(lane(v, w + t) is None for t in range(32)):
          raise Unsupported("nvvm.stmatrix of an undefined register")
        vals.append([lane(v, w + t) & 0xFFFFFFFF for t in range(32)])
      for i in range(num):  # row r of matrix i is lane 8 * i + r's: lane order
        for r in range(8):
          data, at = rows[i][r]
          row = []
          for k in range(8):  # element (r, k)
            if trans:  # held by lane 4 * k + r // 2, half r % 2
              word, half = vals[i][4 * k + r // 2], r % 2
            else:  # held by lane 4 * r + k // 2, half k % 2
              word, half = vals[i][4 * r + k // 2], k % 2
            row.append((word >> (16 * half)) & 0xFFFF)
          data[at:at + 16] = b"".join(e.to_bytes(2, "little") for e in row)
  return comp.simple(step)
