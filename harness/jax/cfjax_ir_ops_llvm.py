"""jax-ir ops of the `llvm` dialect (all but `llvm.inline_asm`, which is PTX: cfjax_ir_ops_ptx).

Memref descriptors as LLVM structs (`(allocated, aligned, offset, (sizes), (strides))`), pointer
arithmetic, and the host function's private memory (allocas, loads, stores).
Registers into cfjax_ir_core.OPS: llvm.mlir.constant, llvm.mlir.undef, llvm.mlir.global,
llvm.insertvalue, llvm.extractvalue, llvm.getelementptr, llvm.ptrtoint / inttoptr / addrspacecast
(the value unchanged), llvm.add / mul / udiv / urem / sub / and / or / shl / lshr (the arith ops,
cfjax_ir_ops_arith), llvm.alloca, llvm.store, llvm.load, and llvm.bitcast / llvm.insertelement on
accumulator vectors (no value: never read by a case).
"""

from __future__ import annotations

import re

import cfjax_ir_ops_arith as arith
from cfjax_ir_core import HOST_BASE, elem_bytes, ints, lift, register, signed, uniform, width
from cfjax_ir_extract import Unsupported


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
  m = re.fullmatch(r"!llvm\.struct<\(ptr(?:<3>)?, ptr(?:<3>)?, i64, array<(\d+) x i64>, array<\d+ x i64>\)>", t)
  if m is None:
    if t.startswith("vector<"):
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

  def step(th):
    s = uniform(th.env[c], "descriptor")
    for p in pos:
      s = None if s is None else s[p]  # None: accumulator registers (never read by a case)
    th.env[o] = s
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
                        ("llvm.or", arith.ori), ("llvm.shl", arith.shli), ("llvm.lshr", arith.shrui)):
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


@register("llvm.store")
def store(comp, op, ins, outs):
  v, p = ins[0], ins[1]
  mach = comp.m

  def step(th):
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


@register("llvm.bitcast", "llvm.insertelement")
def accumulator(comp, op, ins, outs):
  """An accumulator's value (as vector.broadcast, cfjax_ir_ops_vector): never read by a case."""
  return comp.const(outs, None)
