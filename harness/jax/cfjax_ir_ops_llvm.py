"""jax-ir ops of the `llvm` dialect (all but `llvm.inline_asm`, which is PTX: cfjax_ir_ops_ptx).

Memref descriptors as LLVM structs (`(allocated, aligned, offset, (sizes), (strides))`; GMEM,
SMEM `ptr<3>`, or a peer CTA's SMEM through shared::cluster `ptr<7>`, get_cluster_ref's), pointer
arithmetic, the host function's private memory (allocas, loads, stores), and the kernel's
`llvm.load`/`llvm.store` of `vector<N x T>` through SMEM (`!llvm.ptr<3>`), a peer CTA's SMEM
(`!llvm.ptr<7>`, a shared::cluster address from mapa: `plgpu.cluster_ref` of a tiled ref) and GMEM
pointers, lane by lane (a ref in a WGMMA layout: a tiled, swizzled SMEM ref's registers, their
addresses swizzled by the IR itself). llvm.extractvalue of a struct that differs by lane
(nvvm.ldmatrix's registers) extracts lane by lane.
Registers into cfjax_ir_core.OPS: llvm.mlir.constant, llvm.mlir.undef, llvm.mlir.global,
llvm.insertvalue, llvm.extractvalue, llvm.getelementptr, llvm.ptrtoint / inttoptr / addrspacecast
(the value unchanged), llvm.add / mul / udiv / urem / sub / and / or / shl / lshr / ashr (the arith ops,
cfjax_ir_ops_arith), llvm.alloca, llvm.store, llvm.load, llvm.bitcast on accumulator vectors (no value: never read by a
case) and llvm.insertelement.
"""

from __future__ import annotations

import math
import re

import cfjax_ir_ops_arith as arith
from cfjax_ir_core import (GMEM_BASE, HOST_BASE, LANES, LV, elem_bytes, ints, lane, lift, register,
                           signed, uniform, width)
from cfjax_ir_extract import Unsupported
from cfjax_ir_ops_vector import scalar_bits, vector_type


def ir_type_of(attr):
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  return ir.TypeAttr(attr).value


@register("llvm.mlir.constant")
def mlir_constant(comp, op, ins, outs):
  s = str(op.attributes["value"])
  m = re.fullmatch(r"(-?\d+) : (\w+)", s)
  if m is None:
    raise Unsupported(f"op llvm.mlir.constant {s[:40]}")
  return comp.const(outs, int(m.group(1)) & ((1 << width(m.group(2))) - 1))


@register("llvm.mlir.undef")
def mlir_undef(comp, op, ins, outs):
  t = str(op.results[0].type)
  m = re.fullmatch(r"!llvm\.struct<\(ptr(?:<[37]>)?, ptr(?:<[37]>)?, i64, array<(\d+) x i64>, array<\d+ x i64>\)>", t)
  if m is None:
    # An undefined vector, or scalar (FragmentedArray.broadcasted_iota splats an undef element
    # before it writes every register): None, which no case may read.
    if t.startswith("vector<") or re.fullmatch(r"i\d+|bf16|f16|f32", t):
      return comp.const(outs, None)
    raise Unsupported(f"op llvm.mlir.undef {t}")
  r = int(m.group(1))
  return comp.const(outs, (0, 0, 0, (0,) * r, (0,) * r))


def _positions(op):
  return ints(op.attributes["position"])


@register("llvm.insertvalue")
def insertvalue(comp, op, ins, outs):
  pos = _positions(op)
  c, v, o = ins[0], ins[1], outs[0]

  def put(s, val):
    s = list(s)
    if len(pos) == 1:
      s[pos[0]] = val
    else:
      inner = list(s[pos[0]])
      inner[pos[1]] = val
      s[pos[0]] = tuple(inner)
    return tuple(s)

  def step(th):
    env = th.env
    cont = uniform(env[c], "descriptor")
    env[o] = None if cont is None else put(cont, uniform(env[v], "descriptor field"))
  return comp.simple(step)


@register("llvm.extractvalue")
def extractvalue(comp, op, ins, outs):
  pos = _positions(op)
  c, o = ins[0], outs[0]

  def get(s):
    for p in pos:
      s = None if s is None else s[p]  # None: accumulator registers (never read by a case)
    return s

  def step(th):
    s = th.env[c]
    # One struct per lane: nvvm.ldmatrix's registers (cfjax_ir_ops_nvvm), or a descriptor whose
    # fields differ by lane; a descriptor's uniform fields stay uniform.
    if isinstance(s, LV) and any(x != s[0] for x in s):
      th.env[o] = lift(get, s)
    else:
      th.env[o] = get(uniform(s, "descriptor"))
  return comp.simple(step)


@register("llvm.getelementptr")
def getelementptr(comp, op, ins, outs):
  raw = ints(op.attributes["rawConstantIndices"])
  et = op.attributes["elem_type"]
  size = elem_bytes(ir_type_of(et))
  if len(raw) != 1:
    raise Unsupported("op llvm.getelementptr (more than one index)")
  base, o = ins[0], outs[0]
  dyn = ins[1] if raw[0] == -2147483648 else None
  const = raw[0]

  def step(th):
    env = th.env
    idx = env[dyn] if dyn is not None else const
    env[o] = lift(lambda b, i: (b + int(signed(i, 64) * size)) & ((1 << 64) - 1), env[base], idx)
  return comp.simple(step)


@register("llvm.ptrtoint", "llvm.inttoptr", "llvm.addrspacecast")
def ptrtoint(comp, op, ins, outs):
  return comp.unary(ins, outs, lambda a: a)


# The integer ops: the arith dialect's.
for _name, _handler in (("llvm.add", arith.addi), ("llvm.mul", arith.muli), ("llvm.udiv", arith.divui),
                        ("llvm.urem", arith.remui), ("llvm.sub", arith.subi), ("llvm.and", arith.andi),
                        ("llvm.or", arith.ori), ("llvm.shl", arith.shli), ("llvm.lshr", arith.shrui),
                        ("llvm.ashr", arith.shrsi)):
  register(_name)(_handler)


@register("llvm.alloca")
def alloca(comp, op, ins, outs):
  et = str(ir_type_of(op.attributes["elem_type"]))
  m = re.fullmatch(r"!llvm\.array<(\d+) x i8>", et)
  size = int(m.group(1)) if m else elem_bytes(et)
  n, o = ins[0], outs[0]
  mach = comp.m

  def step(th):
    th.env[o] = mach.host_alloc(size * uniform(th.env[n], "alloca size"))
  return comp.simple(step)


def _device_vector(op, ptr_index: int, value_type):
  """(elements, bytes per element) of an llvm.load/llvm.store of a `vector<N x T>` through an SMEM
  pointer (`!llvm.ptr<3>`, or `!llvm.ptr<7>`: shared::cluster, Machine.smem_of) or a generic one
  (`!llvm.ptr`: GMEM, or the host's private memory, told apart by the address), or None for any
  other: Mosaic's loads and stores of a ref in a
  WGMMA layout (a tiled, swizzled SMEM ref's registers, the swizzle in the address; an output's
  slice). Other values through a generic pointer stay the host's (`load`, `store` below)."""
  if str(op.operands[ptr_index].type) not in ("!llvm.ptr<3>", "!llvm.ptr<7>", "!llvm.ptr"):
    return None
  vt = vector_type(value_type)
  if vt is None:
    if str(op.operands[ptr_index].type) != "!llvm.ptr":
      raise Unsupported(f"op llvm.load/store of {value_type} through an SMEM pointer")
    return None
  shape, _, bits = vt
  return math.prod(shape), bits // 8


def _device_lanes(th, p, nbytes, smem: bool):
  """(lane, bytearray, offset) of each active lane's pointer `p` (SMEM, or a GMEM array), lane
  order; None when the (uniform) pointer is the host's."""
  mach = th.mach
  out = []
  for i in range(LANES):
    if th.mask is not None and not th.mask[i]:
      continue
    addr = lane(th.env[p], i)
    if smem:
      r, at = mach.smem_of(th.cta, addr)
      data = mach.smem[r]
    elif GMEM_BASE <= addr < HOST_BASE - (1 << 21):
      base, data, _ = mach.gmem_at(addr)
      at = addr - base
    elif not out and uniform(th.env[p], "vector load/store address") == addr:
      return None  # the host's private memory
    else:
      raise Unsupported("llvm.load/store of a vector outside SMEM and GMEM")
    if at < 0 or at + nbytes > len(data):
      raise Unsupported("llvm.load/store past the end of its memory")
    out.append((i, data, at))
  return out


@register("llvm.store")
def store(comp, op, ins, outs):
  v, p = ins[0], ins[1]
  mach = comp.m
  sv = _device_vector(op, 1, op.operands[0].type)
  smem = str(op.operands[1].type) in ("!llvm.ptr<3>", "!llvm.ptr<7>")

  def step(th):
    if sv is not None:
      n, nb = sv
      where = _device_lanes(th, p, n * nb, smem)
      if where is not None:
        val = th.env[v]
        if val is None:
          raise Unsupported("llvm.store of an accumulator's value")
        for i, data, at in where:
          elems = lane(val, i)
          if elems is None or None in elems:
            raise Unsupported("llvm.store of an undefined element (an undef vector's)")
          data[at:at + n * nb] = b"".join(int(e).to_bytes(nb, "little") for e in elems)
        return
    addr = uniform(th.env[p], "store address")
    if addr < HOST_BASE - (1 << 21):
      raise Unsupported("op llvm.store (to device memory)")
    mach.mem[addr] = th.env[v]
  return comp.simple(step)


@register("llvm.load")
def load(comp, op, ins, outs):
  t = str(op.results[0].type)
  p, o = ins[0], outs[0]
  mach = comp.m
  sv = _device_vector(op, 0, op.results[0].type)
  smem = str(op.operands[0].type) in ("!llvm.ptr<3>", "!llvm.ptr<7>")
  if sv is not None:
    n, nb = sv

    def device_step(th):
      where = _device_lanes(th, p, n * nb, smem)
      if where is None:  # the host's private memory
        addr = uniform(th.env[p], "load address")
        if addr not in mach.mem:
          raise Unsupported("op llvm.load (of memory the evaluator does not hold)")
        th.env[o] = mach.mem[addr]
        return
      vals = {i: tuple(int.from_bytes(data[at + k * nb:at + (k + 1) * nb], "little")
                       for k in range(n)) for i, data, at in where}
      zero = (0,) * n  # an inactive lane's value is never used
      th.env[o] = LV(vals.get(i, zero) for i in range(LANES))
    return comp.simple(device_step)
  if t.startswith("!llvm.array<"):
    def step(th):
      th.env[o] = ("host-array", uniform(th.env[p], "load address"))
    return comp.simple(step)

  def step2(th):
    addr = uniform(th.env[p], "load address")
    if addr not in mach.mem:
      raise Unsupported("op llvm.load (of memory the evaluator does not hold)")
    th.env[o] = mach.mem[addr]
  return comp.simple(step2)


@register("llvm.mlir.global")
def mlir_global(comp, op, ins, outs):
  return None


@register("llvm.bitcast")
def accumulator(comp, op, ins, outs):
  """An accumulator's value (as vector.broadcast, cfjax_ir_ops_vector): never read by a case."""
  return comp.const(outs, None)


@register("llvm.insertelement")
def insertelement(comp, op, ins, outs):
  """Element `pos` of a vector replaced by a scalar's bits (FragmentedArray.astype's int8 ->
  bfloat16 fills an undefined vector<N x i32> with the converted words one by one: elements not
  yet inserted are None, which vector.bitcast refuses). Inserting no value (an accumulator's)
  gives None, as before."""
  try:
    vt = vector_type(op.results[0].type)
  except Unsupported:
    vt = None
  if vt is None:
    return comp.const(outs, None)
  shape, et, bits = vt
  n = math.prod(shape)

  def f(vec, val, pos):
    if val is None:
      return None
    if not 0 <= pos < n:
      raise Unsupported(f"llvm.insertelement at {pos} of {op.results[0].type}")
    dest = list(vec) if vec is not None else [None] * n
    dest[pos] = scalar_bits(val, et, bits)
    return tuple(dest)

  def step(th):
    th.env[outs[0]] = lift(f, *(th.env[i] for i in ins))
  return comp.simple(step)
