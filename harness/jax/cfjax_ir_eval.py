"""jax-ir, part 2: evaluating the lowered Mosaic GPU module for every CTA of the cluster.

The module (cfjax_ir_extract) is walked with the MLIR Python bindings that ship with jaxlib. The
host function runs once (memref descriptors of the kernel arguments, the TMA descriptors it builds
with `mosaic_gpu_init_tma_desc`); the `gpu.launch` body runs once per warpgroup of every CTA of the
modelled cluster, SIMT style: a value is either uniform or one value per lane of the warpgroup, and
`scf.if` / `scf.index_switch` on a lane-dependent condition run each side under a lane mask. Every
warpgroup is a coroutine; the schedule is the reference's canonical one (CTA rank ascending, then
warpgroup, each running until it blocks on a wait; a round without progress is a deadlock). Side
effects of one op happen lane by lane in lane order.

Memory: one flat integer address space. SMEM addresses (`!llvm.ptr<3>`) are offsets into the
executing CTA's dynamic SMEM; `mapa` gives a shared::cluster address, encoded as
(rank + 1) << 24 | offset. GMEM arrays and host allocas live far above. mbarriers live beside SMEM
(keyed by CTA and offset) and follow harness/sim/mbarrier.h exactly.

Anything not modelled raises Unsupported("op NAME") / ("ptx ...") and the case is `unavailable`.
"""

from __future__ import annotations

import collections
import json
import math
import re
from typing import Any

import numpy as np

import cfjax_case
import cfjax_fill
from cfjax_ir_extract import Undefined, Unsupported

LANES = 128
CLUSTER_SHIFT = 24
GMEM_BASE = 1 << 40
GMEM_STRIDE = 1 << 36
HOST_BASE = 1 << 52
ARGS_BASE = (1 << 52) - (1 << 20)
MAX_STEPS = 2_000_000


class LV(tuple):
  """One value per lane of a warpgroup."""


def lane(v, i):
  return v[i] if isinstance(v, LV) else v


def lift(f, *args):
  if not any(isinstance(a, LV) for a in args):
    return f(*args)
  return LV(f(*(lane(a, i) for a in args)) for i in range(LANES))


def uniform(v, what):
  if isinstance(v, LV):
    if all(x == v[0] for x in v):
      return v[0]
    raise Unsupported(f"lane-dependent {what}")
  return v


class Blocked(Exception):
  pass


# ---- types

def _width(t) -> int:
  s = str(t)
  if s == "index":
    return 64
  m = re.fullmatch(r"i(\d+)", s)
  if m:
    return int(m.group(1))
  if s.startswith("!llvm.ptr"):
    return 64
  raise Unsupported(f"type {s}")


def _elem_bytes(t) -> float:
  s = str(t)
  table = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "index": 8, "f16": 2, "bf16": 2,
           "f32": 4, "f64": 8, "i4": 0.5, "f8E4M3FN": 1, "f8E5M2": 1, "!llvm.ptr": 8,
           "!llvm.ptr<3>": 8, "!mosaic_gpu.barrier": 8}
  if s in table:
    return table[s]
  raise Unsupported(f"type {s}")


def _attrs(op) -> dict:
  out = {}
  for a in op.attributes:
    if isinstance(a, str):
      out[a] = op.attributes[a]
    else:
      out[a.name] = a.attr
  return out


def _ints(attr):
  """The integers of a dense array attribute, `array<i32: 1, 2>` -> [1, 2]."""
  s = str(attr)
  if ":" in s:
    s = s.split(":", 1)[1]
  return [int(x) for x in re.findall(r"-?\d+", s)]


def _rank_reduced(full, res_shape):
  """(sizes, strides) of a subview whose result drops unit dims to `res_shape`: unit dims are
  dropped, first ones first, while there are more dims left than result dims."""
  kept, j = [], 0
  for i, (size, stride) in enumerate(full):
    if len(full) - i > len(res_shape) - j and size == 1:
      continue
    if j >= len(res_shape) or (res_shape[j] >= 0 and res_shape[j] != size):
      raise Unsupported("op memref.subview (rank reduction)")
    kept.append((size, stride))
    j += 1
  if j != len(res_shape):
    raise Unsupported("op memref.subview (rank reduction)")
  return tuple(k[0] for k in kept), tuple(k[1] for k in kept)


def _tdiv(x, y):
  """Integer division rounding toward zero (LLVM's sdiv)."""
  q = abs(x) // abs(y)
  return q if (x >= 0) == (y >= 0) else -q


def _signed(v, w):
  v &= (1 << w) - 1
  return v - (1 << w) if v >> (w - 1) else v


_TMA_BITS = {0: 4, 1: 8, 2: 16, 3: 32, 4: 64, 5: 16, 6: 32, 7: 16}


# ---- the memref / llvm descriptor: [allocated, aligned, offset, [sizes], [strides]]

def _memref_type(t):
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  return ir.MemRefType(t)


def _static_shape_strides(t):
  mt = _memref_type(t)
  shape = list(mt.shape)
  strides, offset = mt.get_strides_and_offset()
  return mt, shape, list(strides), offset


class Mbarrier:
  __slots__ = ("expected", "pending", "tx", "phase", "arrivals", "armed", "received", "phases")

  def __init__(self, count):
    self.expected = count
    self.pending = count
    self.tx = 0
    self.phase = 0
    self.arrivals = self.armed = self.received = self.phases = 0

  def _settle(self):
    if self.pending != 0 or self.tx != 0:
      return
    self.phase += 1
    self.phases += 1
    self.pending = self.expected

  def arrive(self, count, nbytes):
    self.tx += nbytes
    self.armed += nbytes
    self.pending -= count
    self.arrivals += count
    self._settle()

  def complete_tx(self, nbytes):
    self.tx -= nbytes
    self.received += nbytes
    self._settle()


class TmaDesc:
  def __init__(self, base, bits, sizes, strides, window, swizzle):
    self.base, self.bits, self.sizes, self.strides, self.window = base, bits, sizes, strides, window
    self.swizzle = swizzle


# ---- the machine

class Machine:
  def __init__(self, case, allocs, op_paths, label_re):
    self.case = case
    self.allocs = allocs
    self.op_paths = op_paths
    self.label_re = label_re
    self.mem: dict[int, Any] = {}  # host / private words
    self.next_host = HOST_BASE
    self.tma: dict[int, TmaDesc] = {}
    self.gmem: list[tuple[int, bytearray, dict]] = []  # (base, bytes, spec)
    self.ctas = case.mesh.cta_coords()
    self.num_ctas = len(self.ctas)
    # CUDA's x is the last Pallas cluster axis (ranks are row-major over the Pallas axes).
    self.cluster3 = list(reversed(case.mesh.cluster)) + [1] * (3 - len(case.mesh.cluster))
    self.smem: list[bytearray] = []
    self.bars: list[dict[int, Mbarrier]] = []
    self.waits: list[list[dict]] = []
    self.sync_gen: list[int] = []
    self.sync_arrived: list[int] = []
    self.cluster_gen = 0
    self.cluster_arrived = 0
    self.num_wgs = 1
    self.steps = 0
    self.outputs_written: dict[int, list] = {}
    self.wait_counts: dict = {}
    self.barrier_labels: set = set()
    self.finished: dict = collections.defaultdict(int)
    self.snapshots: dict = {}

  # -- memory

  def host_alloc(self, nbytes):
    a = self.next_host
    self.next_host += max(64, (int(nbytes) + 63) // 64 * 64)
    return a

  def gmem_at(self, addr):
    for base, data, spec in self.gmem:
      if base <= addr < base + GMEM_STRIDE:
        return base, data, spec
    raise Unsupported("gmem address")

  def smem_of(self, cta, addr):
    """(cta, offset) for an SMEM address seen by `cta` (shared::cta or shared::cluster)."""
    if addr >> CLUSTER_SHIFT:
      r = (addr >> CLUSTER_SHIFT) - 1
      if r >= self.num_ctas:
        raise Unsupported("shared::cluster address past the cluster")
      return r, addr & ((1 << CLUSTER_SHIFT) - 1)
    return cta, addr

  def bar(self, cta, addr):
    r, off = self.smem_of(cta, addr)
    b = self.bars[r].get(off)
    if b is None:
      raise Unsupported("mbarrier used before init")
    return b


def _label(loc_str, label_re):
  found = label_re.findall(loc_str)
  return int(found[-1]) if found else None


# ---- the interpreter: ops compiled once into closures over slot numbers

class Compiler:
  def __init__(self, machine: Machine):
    self.m = machine
    self.slots: dict = {}
    self.unknown: list[str] = []

  def slot(self, v):
    k = v
    s = self.slots.get(k)
    if s is None:
      s = self.slots[k] = len(self.slots)
    return s

  def block(self, block):
    return [self.op(op) for op in block.operations]

  def op(self, op):
    op = op.operation if hasattr(op, "operation") else op
    name = op.name
    fn = getattr(self, "op_" + name.replace(".", "_"), None)
    if fn is None:
      raise Unsupported(f"op {name}")
    ins = [self.slot(v) for v in op.operands]
    outs = [self.slot(r) for r in op.results]
    return fn(op, ins, outs)

  # helpers to build steps: step(th) -> None, or a generator for ops that may block
  @staticmethod
  def _simple(f):
    f.gen = False
    return f

  def _unary(self, ins, outs, f):
    a, o = ins[0], outs[0]

    def step(th):
      env = th.env
      env[o] = lift(f, env[a])
    return self._simple(step)

  def _binary(self, ins, outs, f):
    a, b, o = ins[0], ins[1], outs[0]

    def step(th):
      env = th.env
      env[o] = lift(f, env[a], env[b])
    return self._simple(step)

  def _const(self, outs, value):
    o = outs[0]

    def step(th):
      th.env[o] = value
    return self._simple(step)

  def _attr_int(self, op, name):
    return int(str(op.attributes[name]).split(":")[0].strip())

  # -- arith
  def op_arith_constant(self, op, ins, outs):
    v = op.attributes["value"]
    s = str(v)
    if s in ("true", "false"):
      return self._const(outs, 1 if s == "true" else 0)
    m = re.fullmatch(r"(-?\d+) : (\w+)", s)
    if m is None:
      m2 = re.fullmatch(r"(-?[\d.e+-]+) : f\d+", s)
      if m2 is not None:
        return self._const(outs, float(m2.group(1)))
      raise Unsupported(f"op arith.constant {s[:40]}")
    w = _width(m.group(2))
    return self._const(outs, int(m.group(1)) & ((1 << w) - 1))

  def _w(self, op):
    return _width(op.results[0].type)

  def op_arith_addi(self, op, ins, outs):
    mask = (1 << self._w(op)) - 1
    return self._binary(ins, outs, lambda a, b: (a + b) & mask)

  def op_arith_subi(self, op, ins, outs):
    mask = (1 << self._w(op)) - 1
    return self._binary(ins, outs, lambda a, b: (a - b) & mask)

  def op_arith_muli(self, op, ins, outs):
    mask = (1 << self._w(op)) - 1
    return self._binary(ins, outs, lambda a, b: (a * b) & mask)

  def op_arith_andi(self, op, ins, outs):
    return self._binary(ins, outs, lambda a, b: a & b)

  def op_arith_ori(self, op, ins, outs):
    return self._binary(ins, outs, lambda a, b: a | b)

  def op_arith_xori(self, op, ins, outs):
    return self._binary(ins, outs, lambda a, b: a ^ b)

  def op_arith_shli(self, op, ins, outs):
    w = self._w(op)
    return self._binary(ins, outs, lambda a, b: (a << b) & ((1 << w) - 1) if b < w else 0)

  def op_arith_shrui(self, op, ins, outs):
    return self._binary(ins, outs, lambda a, b: a >> b)

  def _div(self, f):
    def g(a, b):
      if b == 0:
        raise Unsupported("division by zero")
      return f(a, b)
    return g

  def op_arith_divui(self, op, ins, outs):
    return self._binary(ins, outs, self._div(lambda a, b: a // b))

  def op_arith_remui(self, op, ins, outs):
    return self._binary(ins, outs, self._div(lambda a, b: a % b))

  def op_arith_divsi(self, op, ins, outs):
    w = self._w(op)
    return self._binary(ins, outs, self._div(
        lambda a, b: _tdiv(_signed(a, w), _signed(b, w)) & ((1 << w) - 1)))

  def op_arith_remsi(self, op, ins, outs):
    w = self._w(op)

    def rem(a, b):
      x, y = _signed(a, w), _signed(b, w)
      return (x - _tdiv(x, y) * y) & ((1 << w) - 1)
    return self._binary(ins, outs, self._div(rem))

  def op_arith_minui(self, op, ins, outs):
    return self._binary(ins, outs, min)

  def op_arith_maxui(self, op, ins, outs):
    return self._binary(ins, outs, max)

  def op_arith_cmpi(self, op, ins, outs):
    pred = str(op.attributes["predicate"]).split(":")[0].strip()
    w = _width(op.operands[0].type)
    code = int(pred)
    fs = {0: lambda a, b: a == b, 1: lambda a, b: a != b,
          2: lambda a, b: _signed(a, w) < _signed(b, w), 3: lambda a, b: _signed(a, w) <= _signed(b, w),
          4: lambda a, b: _signed(a, w) > _signed(b, w), 5: lambda a, b: _signed(a, w) >= _signed(b, w),
          6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b, 9: lambda a, b: a >= b}
    f = fs[code]
    return self._binary(ins, outs, lambda a, b: 1 if f(a, b) else 0)

  def op_arith_select(self, op, ins, outs):
    c, a, b, o = ins[0], ins[1], ins[2], outs[0]

    def step(th):
      env = th.env
      env[o] = lift(lambda x, y, z: y if x else z, env[c], env[a], env[b])
    return self._simple(step)

  def op_arith_index_cast(self, op, ins, outs):
    wi, wo = _width(op.operands[0].type), self._w(op)
    return self._unary(ins, outs, lambda a: _signed(a, wi) & ((1 << wo) - 1))

  def op_arith_index_castui(self, op, ins, outs):
    wo = self._w(op)
    return self._unary(ins, outs, lambda a: a & ((1 << wo) - 1))

  def op_arith_extui(self, op, ins, outs):
    return self._unary(ins, outs, lambda a: a)

  def op_arith_extsi(self, op, ins, outs):
    wi, wo = _width(op.operands[0].type), self._w(op)
    return self._unary(ins, outs, lambda a: _signed(a, wi) & ((1 << wo) - 1))

  def op_arith_trunci(self, op, ins, outs):
    wo = self._w(op)
    return self._unary(ins, outs, lambda a: a & ((1 << wo) - 1))

  # -- llvm
  def op_llvm_mlir_constant(self, op, ins, outs):
    s = str(op.attributes["value"])
    m = re.fullmatch(r"(-?\d+) : (\w+)", s)
    if m is None:
      raise Unsupported(f"op llvm.mlir.constant {s[:40]}")
    return self._const(outs, int(m.group(1)) & ((1 << _width(m.group(2))) - 1))

  def op_llvm_mlir_undef(self, op, ins, outs):
    t = str(op.results[0].type)
    m = re.fullmatch(r"!llvm\.struct<\(ptr(?:<3>)?, ptr(?:<3>)?, i64, array<(\d+) x i64>, array<\d+ x i64>\)>", t)
    if m is None:
      if t.startswith("vector<"):
        return self._const(outs, None)
      raise Unsupported(f"op llvm.mlir.undef {t}")
    r = int(m.group(1))
    return self._const(outs, (0, 0, 0, (0,) * r, (0,) * r))

  def _positions(self, op):
    return _ints(op.attributes["position"])

  def op_llvm_insertvalue(self, op, ins, outs):
    pos = self._positions(op)
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
    return self._simple(step)

  def op_llvm_extractvalue(self, op, ins, outs):
    pos = self._positions(op)
    c, o = ins[0], outs[0]

    def step(th):
      s = uniform(th.env[c], "descriptor")
      for p in pos:
        s = None if s is None else s[p]  # None: accumulator registers (never read by a case)
      th.env[o] = s
    return self._simple(step)

  def op_llvm_getelementptr(self, op, ins, outs):
    raw = _ints(op.attributes["rawConstantIndices"])
    et = op.attributes["elem_type"]
    size = _elem_bytes(ir_type_of(et))
    if len(raw) != 1:
      raise Unsupported("op llvm.getelementptr (more than one index)")
    base, o = ins[0], outs[0]
    dyn = ins[1] if raw[0] == -2147483648 else None
    const = raw[0]

    def step(th):
      env = th.env
      idx = env[dyn] if dyn is not None else const
      env[o] = lift(lambda b, i: (b + int(_signed(i, 64) * size)) & ((1 << 64) - 1), env[base], idx)
    return self._simple(step)

  def op_llvm_ptrtoint(self, op, ins, outs):
    return self._unary(ins, outs, lambda a: a)

  op_llvm_inttoptr = op_llvm_ptrtoint
  op_llvm_addrspacecast = op_llvm_ptrtoint

  def op_llvm_add(self, op, ins, outs):
    return self.op_arith_addi(op, ins, outs)

  def op_llvm_mul(self, op, ins, outs):
    return self.op_arith_muli(op, ins, outs)

  def op_llvm_udiv(self, op, ins, outs):
    return self.op_arith_divui(op, ins, outs)

  def op_llvm_urem(self, op, ins, outs):
    return self.op_arith_remui(op, ins, outs)

  def op_llvm_sub(self, op, ins, outs):
    return self.op_arith_subi(op, ins, outs)

  def op_llvm_and(self, op, ins, outs):
    return self.op_arith_andi(op, ins, outs)

  def op_llvm_or(self, op, ins, outs):
    return self.op_arith_ori(op, ins, outs)

  def op_llvm_shl(self, op, ins, outs):
    return self.op_arith_shli(op, ins, outs)

  def op_llvm_lshr(self, op, ins, outs):
    return self.op_arith_shrui(op, ins, outs)

  def op_llvm_alloca(self, op, ins, outs):
    et = str(ir_type_of(op.attributes["elem_type"]))
    m = re.fullmatch(r"!llvm\.array<(\d+) x i8>", et)
    size = int(m.group(1)) if m else _elem_bytes(et)
    n, o = ins[0], outs[0]
    mach = self.m

    def step(th):
      th.env[o] = mach.host_alloc(size * uniform(th.env[n], "alloca size"))
    return self._simple(step)

  def op_llvm_store(self, op, ins, outs):
    v, p = ins[0], ins[1]
    mach = self.m

    def step(th):
      addr = uniform(th.env[p], "store address")
      if addr < HOST_BASE - (1 << 21):
        raise Unsupported("op llvm.store (to device memory)")
      mach.mem[addr] = th.env[v]
    return self._simple(step)

  def op_llvm_load(self, op, ins, outs):
    t = str(op.results[0].type)
    p, o = ins[0], outs[0]
    mach = self.m
    if t.startswith("!llvm.array<"):
      def step(th):
        th.env[o] = ("host-array", uniform(th.env[p], "load address"))
      return self._simple(step)

    def step2(th):
      addr = uniform(th.env[p], "load address")
      if addr not in mach.mem:
        raise Unsupported("op llvm.load (of memory the evaluator does not hold)")
      th.env[o] = mach.mem[addr]
    return self._simple(step2)

  def op_llvm_mlir_global(self, op, ins, outs):
    return None

  # -- builtin / func
  def op_builtin_unrealized_conversion_cast(self, op, ins, outs):
    a, o = ins[0], outs[0]
    src = str(op.operands[0].type)
    dst = str(op.results[0].type)

    def step(th):
      v = th.env[a]
      if isinstance(v, tuple) and not isinstance(v, LV) and v and v[0] == "host-array":
        v = v[1]  # the TMA descriptors' host array, passed to the kernel by address
      th.env[o] = v
    _ = (src, dst)
    return self._simple(step)

  def op_func_call(self, op, ins, outs):
    callee = str(op.attributes["callee"]).lstrip("@")
    if callee != "mosaic_gpu_init_tma_desc":
      raise Unsupported(f"op func.call @{callee}")
    mach = self.m

    def step(th):
      e = th.env
      desc, base, dtype, rank, sizes, strides, swizzle, window = (uniform(e[i], "tma") for i in ins)
      if dtype not in _TMA_BITS:
        raise Unsupported(f"tma dtype {dtype}")
      rd = lambda p, k: mach.mem[p + 8 * k]  # noqa: E731
      mach.tma[desc] = TmaDesc(base, _TMA_BITS[dtype], [rd(sizes, k) for k in range(rank)],
                               [rd(strides, k) for k in range(rank)],
                               [rd(window, k) for k in range(rank)], swizzle)
    return self._simple(step)

  def op_func_return(self, op, ins, outs):
    return None

  # -- memref
  def op_memref_reinterpret_cast(self, op, ins, outs):
    dynsent = -9223372036854775808
    at = _attrs(op)
    offs, sizes, strides = (_ints(at[n]) for n in ("static_offsets", "static_sizes", "static_strides"))
    a, o = ins[0], outs[0]
    dyn = ins[1:]

    def step(th):
      d = uniform(th.env[a], "memref")
      k = 0
      vals = []
      for group in (offs, sizes, strides):
        out = []
        for x in group:
          if x == dynsent:
            x = _signed(uniform(th.env[dyn[k]], "reinterpret_cast operand"), 64)
            k += 1
          out.append(x)
        vals.append(out)
      th.env[o] = (d[0], d[1], vals[0][0] if vals[0] else 0, tuple(vals[1]), tuple(vals[2]))
    return self._simple(step)

  def op_memref_view(self, op, ins, outs):
    _, shape, strides, _ = _static_shape_strides(op.results[0].type)
    if len(ins) != 2:
      raise Unsupported("op memref.view (dynamic sizes)")
    a, sh, o = ins[0], ins[1], outs[0]

    def step(th):
      d = uniform(th.env[a], "memref")
      shift = uniform(th.env[sh], "view shift")
      p = d[1] + d[2] + shift
      th.env[o] = (p, p, 0, tuple(shape), tuple(strides))
    return self._simple(step)

  def op_memref_subview(self, op, ins, outs):
    st = lambda n: _ints(op.attributes[n])  # noqa: E731
    offs, sizes, steps = st("static_offsets"), st("static_sizes"), st("static_strides")
    res_shape = list(_memref_type(op.results[0].type).shape)
    dynsent = -9223372036854775808
    if any(x == dynsent for x in sizes + steps):
      raise Unsupported("op memref.subview (dynamic sizes)")
    a, o = ins[0], outs[0]
    dyn = ins[1:]

    def step(th):
      d = uniform(th.env[a], "memref")
      k = 0
      off = d[2]
      for i, x in enumerate(offs):
        if x == dynsent:
          x = _signed(uniform(th.env[dyn[k]], "subview offset"), 64)
          k += 1
        off += x * d[4][i]
      full = [(sizes[i], d[4][i] * steps[i]) for i in range(len(sizes))]
      th.env[o] = (d[0], d[1], off, *_rank_reduced(full, res_shape))
    return self._simple(step)

  def op_memref_transpose(self, op, ins, outs):
    perm_s = str(op.attributes["permutation"])
    m = re.fullmatch(r"affine_map<\(([^)]*)\) -> \(([^)]*)\)>", perm_s)
    if m is None:
      raise Unsupported("op memref.transpose (permutation)")
    dims = [d.strip() for d in m.group(1).split(",")]
    res = [d.strip() for d in m.group(2).split(",")]
    if sorted(res) != sorted(dims):
      raise Unsupported("op memref.transpose (permutation)")
    perm = [dims.index(r) for r in res]
    a, o = ins[0], outs[0]

    def step(th):
      d = uniform(th.env[a], "memref")
      th.env[o] = (d[0], d[1], d[2], tuple(d[3][p] for p in perm), tuple(d[4][p] for p in perm))
    return self._simple(step)

  def op_memref_cast(self, op, ins, outs):
    # Only a change of static type information: the descriptor is the same.
    _, shape, strides, offset = _static_shape_strides(op.results[0].type)
    a, o = ins[0], outs[0]

    def step(th):
      d = uniform(th.env[a], "memref")
      if any(x >= 0 and x != y for x, y in zip(shape, d[3])) or any(
          x >= 0 and x != y for x, y in zip(strides, d[4])):
        raise Unsupported("op memref.cast (to a layout the value does not have)")
      th.env[o] = d
    return self._simple(step)

  def op_memref_extract_strided_metadata(self, op, ins, outs):
    a = ins[0]

    def step(th):
      d = uniform(th.env[a], "memref")
      env = th.env
      env[outs[0]] = (d[0], d[1], 0, (), ())
      env[outs[1]] = d[2]
      r = len(d[3])
      for i in range(r):
        env[outs[2 + i]] = d[3][i]
        env[outs[2 + r + i]] = d[4][i]
    return self._simple(step)

  def op_memref_extract_aligned_pointer_as_index(self, op, ins, outs):
    a, o = ins[0], outs[0]

    def step(th):
      th.env[o] = uniform(th.env[a], "memref")[1]
    return self._simple(step)

  def op_memref_alloca(self, op, ins, outs):
    _, shape, strides, _ = _static_shape_strides(op.results[0].type)
    n = math.prod(shape) if shape else 1
    o = outs[0]
    mach = self.m

    def step(th):
      p = mach.host_alloc(8 * n)
      th.env[o] = (p, p, 0, tuple(shape), tuple(strides))
    return self._simple(step)

  def _mem_addr(self, th, m, idx):
    d = uniform(th.env[m], "memref")
    off = d[2] + sum(uniform(th.env[i], "memref index") * s for i, s in zip(idx, d[4]))
    if d[1] < HOST_BASE - (1 << 21):
      raise Unsupported("memref.load/store of device memory")
    return d[1] + 8 * off

  def op_memref_store(self, op, ins, outs):
    v, m, idx = ins[0], ins[1], ins[2:]
    mach = self.m

    def step(th):
      addr = self._mem_addr(th, m, idx)
      new = th.env[v]
      if th.mask is not None:
        old = mach.mem.get(addr, 0)
        new = LV(lane(new, i) if th.mask[i] else lane(old, i) for i in range(LANES))
      mach.mem[addr] = new
    return self._simple(step)

  def op_memref_load(self, op, ins, outs):
    m, idx, o = ins[0], ins[1:], outs[0]
    mach = self.m

    def step(th):
      addr = self._mem_addr(th, m, idx)
      if addr not in mach.mem:
        raise Unsupported("memref.load of memory never stored")
      th.env[o] = mach.mem[addr]
    return self._simple(step)

  # -- gpu
  def op_gpu_launch(self, op, ins, outs):
    raise Unsupported("op gpu.launch (nested)")

  def _id(self, op, outs, f):
    dim = str(op.attributes["dimension"])
    d = "xyz".index(dim.split("<")[-1].rstrip(">").strip()[-1])
    o = outs[0]

    def step(th):
      th.env[o] = f(th, d)
    return self._simple(step)

  def op_gpu_thread_id(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.tid if d == 0 else 0)

  def op_gpu_block_dim(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.block[d])

  def op_gpu_cluster_block_id(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.cluster_id[d])

  def op_gpu_block_id(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.cluster_id[d])  # grid index 0's cluster

  def op_gpu_cluster_dim_blocks(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.mach.cluster3[d])

  def op_gpu_grid_dim(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: th.grid[d])

  def op_gpu_cluster_id(self, op, ins, outs):
    return self._id(op, outs, lambda th, d: 0)

  def op_gpu_dynamic_shared_memory(self, op, ins, outs):
    _, shape, strides, _ = _static_shape_strides(op.results[0].type)
    return self._const(outs, (0, 0, 0, (1 << 30,), (1,)))

  def op_gpu_terminator(self, op, ins, outs):
    return None

  def op_gpu_barrier(self, op, ins, outs):
    label = _label(str(op.location), self.m.label_re)
    mach = self.m
    mach.barrier_labels.add(label)

    def step(th):
      cta = th.cta
      rec = None
      if label is not None and label < len(mach.op_paths):
        key = ("sync", cta, th.wg)
        ph = mach.wait_counts.get(key, 0)
        mach.wait_counts[key] = ph + 1
        rec = {"thread": th.wg, "op": mach.op_paths[label], "barrier": "block_sync",
               "phase": ph, "completed": False}
        mach.waits[cta].append(rec)
      gen = mach.sync_gen[cta]
      mach.sync_arrived[cta] += 1
      if mach.sync_arrived[cta] == mach.num_wgs:
        mach.sync_arrived[cta] = 0
        mach.sync_gen[cta] += 1
        if rec is None:
          # The kernel's entry barrier orders nothing in the canonical schedule: the warpgroup
          # that releases it yields, so that the next round starts again from CTA 0.
          yield
      while mach.sync_gen[cta] == gen:
        yield
      if rec is not None:
        rec["completed"] = True
    step.gen = True
    return step

  # -- vector (an accumulator's zero value, never read by a case)
  def op_vector_broadcast(self, op, ins, outs):
    return self._const(outs, None)

  op_vector_extract_strided_slice = op_vector_broadcast
  op_vector_extract = op_vector_broadcast
  op_vector_bitcast = op_vector_broadcast
  op_llvm_bitcast = op_vector_broadcast
  op_llvm_insertelement = op_vector_broadcast

  # -- nvvm
  def op_nvvm_elect_sync(self, op, ins, outs):
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
    return self._simple(step)

  def op_nvvm_shfl_sync(self, op, ins, outs):
    kind = str(op.attributes["kind"])
    if "idx" not in kind:
      raise Unsupported(f"op nvvm.shfl.sync {kind}")
    val, src, o = ins[1], ins[2], outs[0]

    def step(th):
      v, s = th.env[val], th.env[src]
      th.env[o] = lift(lambda i, s_: lane(v, (i // 32) * 32 + (s_ & 31)), LV(range(LANES)), s)
    return self._simple(step)

  def op_nvvm_fence_proxy(self, op, ins, outs):
    return None

  op_nvvm_tcgen05_fence = op_nvvm_fence_proxy
  op_nvvm_wgmma_fence_aligned = op_nvvm_fence_proxy
  op_nvvm_cp_async_bulk_commit_group = op_nvvm_fence_proxy

  def op_nvvm_cp_async_bulk_wait_group(self, op, ins, outs):
    return None  # copies complete at issue time (docs/outcome-format.md, execution model)

  def _pred_lanes(self, th, pred):
    """Lanes (in order) that are active and whose predicate holds."""
    p = th.env[pred] if pred is not None else 1
    return [i for i in range(LANES) if (th.mask is None or th.mask[i]) and lane(p, i)]

  def op_nvvm_mbarrier_init(self, op, ins, outs):
    pred = ins[2] if len(ins) > 2 else None
    p, c = ins[0], ins[1]
    mach = self.m

    def step(th):
      for i in self._pred_lanes(th, pred):
        r, off = mach.smem_of(th.cta, lane(th.env[p], i))
        count = lane(th.env[c], i)
        if not 1 <= count <= (1 << 20) - 1:
          raise Undefined("mbarrier_init_count",
                          f"mbarrier.init with an arrival count of {count} (the range is 1 to 2^20 - 1)")
        mach.bars[r][off] = Mbarrier(count)
    return self._simple(step)

  def op_nvvm_mbarrier_arrive_expect_tx(self, op, ins, outs):
    pred = ins[2] if len(ins) > 2 else None
    p, n = ins[0], ins[1]
    mach = self.m
    for o in outs:
      pass

    def step(th):
      for i in self._pred_lanes(th, pred):
        mach.bar(th.cta, lane(th.env[p], i)).arrive(1, _signed(lane(th.env[n], i), 32))
      for o in outs:
        th.env[o] = 0
    return self._simple(step)

  def op_nvvm_mbarrier_try_wait_parity(self, op, ins, outs):
    p, par = ins[0], ins[1]
    label = _label(str(op.location), self.m.label_re)
    mach = self.m

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

  def op_nvvm_cp_async_bulk_tensor_shared_cluster_global(self, op, ins, outs):
    n_attr = _attrs(op)
    seg = _ints(n_attr["operandSegmentSizes"])
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
    mach = self.m

    def step(th):
      for i in self._pred_lanes(th, pred):
        get = lambda s: lane(th.env[s], i)  # noqa: E731
        m = get(mask) if mask is not None else None
        mach.tma_load(th.cta, get(parts["dst"][0]), get(parts["desc"][0]),
                      [get(c) for c in parts["coords"]], get(parts["bar"][0]), m, bar_local=True)
    return self._simple(step)

  # -- scf
  def _region_steps(self, region):
    blocks = list(region.blocks)
    if len(blocks) != 1:
      raise Unsupported("a region with more than one block")
    return self.block(blocks[0]), blocks[0]

  def op_scf_yield(self, op, ins, outs):
    def step(th):
      th.yielded = [th.env[i] for i in ins]
    return self._simple(step)

  def _run_branch(self, th, steps, mask):
    saved = th.mask
    th.mask = mask
    th.yielded = []
    try:
      yield from run_steps(th, steps)
    finally:
      th.mask = saved
    return th.yielded

  def _select(self, th, outs, cases):
    """cases: list of (lane-mask or None for all, yielded values)."""
    for j, o in enumerate(outs):
      if len(cases) == 1:
        th.env[o] = cases[0][1][j]
        continue
      vals = [None] * LANES
      for m, ys in cases:
        for i in range(LANES):
          if m[i]:
            vals[i] = lane(ys[j], i)
      th.env[o] = LV(vals)

  def op_scf_if(self, op, ins, outs):
    regions = list(op.regions)
    then_steps, _ = self._region_steps(regions[0])
    else_steps = self._region_steps(regions[1])[0] if regions[1].blocks else None
    c = ins[0]

    def step(th):
      cond = th.env[c]
      if not isinstance(cond, LV) or all(x == cond[0] for x in cond):
        cv = lane(cond, 0)
        if cv:
          ys = yield from self._run_branch(th, then_steps, th.mask)
        elif else_steps is not None:
          ys = yield from self._run_branch(th, else_steps, th.mask)
        else:
          ys = []
        self._select(th, outs, [(None, ys)])
        return
      base = th.mask or [True] * LANES
      tm = [base[i] and bool(cond[i]) for i in range(LANES)]
      em = [base[i] and not cond[i] for i in range(LANES)]
      cases = []
      if any(tm):
        cases.append((tm, (yield from self._run_branch(th, then_steps, tm))))
      if any(em) and else_steps is not None:
        cases.append((em, (yield from self._run_branch(th, else_steps, em))))
      if outs:
        self._select(th, outs, cases)
    step.gen = True
    return step

  def op_scf_index_switch(self, op, ins, outs):
    case_vals = _ints(op.attributes["cases"])
    regions = list(op.regions)
    default = self._region_steps(regions[0])[0]
    branches = [self._region_steps(r)[0] for r in regions[1:]]
    c = ins[0]

    def pick(v):
      for cv, br in zip(case_vals, branches):
        if v == cv:
          return br
      return default

    def step(th):
      v = th.env[c]
      if not isinstance(v, LV) or all(x == v[0] for x in v):
        ys = yield from self._run_branch(th, pick(lane(v, 0)), th.mask)
        self._select(th, outs, [(None, ys)])
        return
      base = th.mask or [True] * LANES
      cases = []
      for target in [*branches, default]:
        m = [base[i] and pick(v[i]) is target for i in range(LANES)]
        if any(m):
          cases.append((m, (yield from self._run_branch(th, target, m))))
      if outs:
        self._select(th, outs, cases)
    step.gen = True
    return step

  def op_scf_for(self, op, ins, outs):
    steps, block = self._region_steps(list(op.regions)[0])
    args = [self.slot(a) for a in block.arguments]
    lo, hi, st, inits = ins[0], ins[1], ins[2], ins[3:]

    def step(th):
      env = th.env
      a, b, s = (uniform(env[x], "loop bound") for x in (lo, hi, st))
      carried = [env[x] for x in inits]
      i = a
      while i < b:
        env[args[0]] = i
        for k, v in enumerate(carried):
          env[args[1 + k]] = v
        th.yielded = []
        yield from run_steps(th, steps)
        carried = th.yielded
        i += s
      for o, v in zip(outs, carried):
        env[o] = v
    step.gen = True
    return step

  # -- inline PTX
  def op_llvm_inline_asm(self, op, ins, outs):
    asm = str(op.attributes["asm_string"])[1:-1]
    asm_n = re.sub(r"\\0A", "\n", asm)
    text = " ".join(asm_n.split())
    return ptx_step(self, op, text, ins, outs)


def ir_type_of(attr):
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  return ir.TypeAttr(attr).value


def run_steps(th, steps):
  m = th.mach
  for s in steps:
    if s is None:
      continue
    m.steps += 1
    if m.steps > MAX_STEPS:
      raise Unsupported("evaluation too long")
    if s.gen:
      yield from s(th)
    else:
      s(th)


_NOOP_PTX = {
    "fence.mbarrier_init.release.cluster;", "@$1 prefetch.tensormap [$0];",
    "wgmma.fence.sync.aligned;", "fence.proxy.async.shared::cta;",
}


def ptx_step(comp: Compiler, op, text: str, ins, outs):
  mach = comp.m
  simple = Compiler._simple

  if text in _NOOP_PTX:
    return None
  if text == "" and not any(str(r.type).startswith("!llvm.ptr") for r in op.results) and all(
      str(v.type).startswith(("vector<", "f", "!llvm.struct<(f", "!llvm.struct<(vector")) for v in op.operands):
    # An empty asm statement: an optimization barrier on accumulator registers (no effect).
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
      for i in comp._pred_lanes(th, ins[2]):
        r, off = mach.smem_of(th.cta, lane(th.env[ins[0]], i))
        mach.bars[r][off] = Mbarrier(lane(th.env[ins[1]], i))
    return simple(init)
  m = re.fullmatch(r"(@\$(\d) )?mbarrier\.arrive(\.expect_tx)?\.release\.cta\.shared::cta\.b64 _, \[\$0\], \$1;", text)
  m1 = re.fullmatch(r"(@\$1 )?mbarrier\.arrive\.release\.cta\.shared::cta\.b64 _, \[\$0\], 1;", text)
  if m or m1:
    expect = bool(m and m.group(3))
    pred = None
    if m and m.group(2):
      pred = ins[int(m.group(2))]
    if m1 and m1.group(1):
      pred = ins[1]

    def arr(th):
      for i in comp._pred_lanes(th, pred):
        b = mach.bar(th.cta, lane(th.env[ins[0]], i))
        if expect:
          b.arrive(1, _signed(lane(th.env[ins[1]], i), 32))
        elif m1:
          b.arrive(1, 0)
        else:
          b.arrive(lane(th.env[ins[1]], i), 0)
    return simple(arr)
  m = re.fullmatch(r"@\$2 mbarrier\.complete_tx\.shared::cta\.b64 \[\$0\], \$1;", text)
  if m:
    def ctx(th):
      for i in comp._pred_lanes(th, ins[2]):
        mach.bar(th.cta, lane(th.env[ins[0]], i)).complete_tx(_signed(lane(th.env[ins[1]], i), 32))
    return simple(ctx)
  m = re.fullmatch(r"\{ \.reg \.b32 mapped_addr; @\$0 mapa\.shared::cluster\.u32 mapped_addr, \$1, \$2; "
                   r"@\$0 mbarrier\.arrive\.shared::cluster\.b64 _, \[mapped_addr\]; \}", text)
  if m:
    def remote(th):
      for i in comp._pred_lanes(th, ins[0]):
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
      for i in comp._pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        bar = get(3)
        if mapped:
          bar = ((0 + 1) << CLUSTER_SHIFT) | bar  # mapa to CTA 0 of the cluster
        mask = get(mask_op) if multicast else None
        mach.tma_load(th.cta, get(1), get(2), [get(k) for k in coord_ops], bar, mask,
                      bar_local=not mapped, pair=cta_pair)
    return simple(tma)
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
      for i in comp._pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        dst, src, n = get(1), get(2), get(3)
        base, data, _ = mach.gmem_at(dst)
        r, off = mach.smem_of(th.cta, src)
        if dst - base + n > len(data) or off + n > len(mach.smem[r]):
          raise Unsupported("bulk store past the end of an array")
        data[dst - base:dst - base + n] = mach.smem[r][off:off + n]
    return simple(store)
  m = re.fullmatch(r"@\$0 cp\.async\.bulk\.shared::cta\.global\.mbarrier::complete_tx::bytes \[\$1\], \[\$2\], \$3, \[\$4\];", text)
  if m:
    def bulk(th):
      for i in comp._pred_lanes(th, ins[0]):
        get = lambda k: lane(th.env[ins[k]], i)  # noqa: E731
        mach.bulk_load(th.cta, get(1), get(2), get(3), get(4))
    return simple(bulk)
  raise Unsupported("ptx " + json.dumps(text[:80]))


def _tma_load(self: Machine, cta, dst, desc_addr, coords, bar, mask, bar_local, pair=False):
  d = self.tma.get(desc_addr)
  if d is None:
    raise Unsupported("TMA descriptor the host never initialised")
  if d.swizzle != 16:
    raise Unsupported(f"TMA swizzle {d.swizzle}")
  rank = len(d.sizes)
  coords = [_signed(c, 32) for c in coords][::-1]  # PTX: innermost first
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
  import itertools  # pylint: disable=import-outside-toplevel
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


def _bulk_load(self: Machine, cta, dst, src, nbytes, bar):
  base, data, _ = self.gmem_at(src)
  off = src - base
  dr, doff = self.smem_of(cta, dst)
  chunk = data[off:off + nbytes]
  if len(chunk) != nbytes:
    raise Unsupported("bulk copy past the end of a GMEM array")
  self.smem[dr][doff:doff + nbytes] = chunk
  br, boff = self.smem_of(cta, bar)
  self.bars[br][boff].complete_tx(nbytes)


Machine.tma_load = _tma_load
Machine.bulk_load = _bulk_load


def _barrier_name(self: Machine, rank, off):
  for name, a in self.allocs.items():
    if a["kind"] in ("barrier", "cluster_barrier") and a["offset"] <= off < a["offset"] + 8 * a["num_barriers"]:
      return f"{name}[{(off - a['offset']) // 8}]"
  raise Unsupported("a wait on an mbarrier no case allocation owns")


Machine.barrier_name = _barrier_name


class Thread:
  """One warpgroup of one CTA."""

  def __init__(self, mach, cta, wg, block, grid):
    self.mach = mach
    self.cta = cta
    self.wg = wg
    self.env: list = []
    self.mask = None
    self.yielded: list = []
    self.tid = LV(range(wg * LANES, (wg + 1) * LANES))
    self.block = block
    self.grid = grid
    coords = mach.ctas[cta]
    # CUDA rank order: x fastest. The Pallas cluster axes are x, y, z in declaration order.
    cl = list(reversed(coords)) + [0] * (3 - len(coords))
    self.cluster_id = cl
    self.cluster_gen = 0


def evaluate(module, case, allocs, op_paths) -> dict:
  """The outcome of the module for the case (kind completed / deadlock), or raises Unsupported."""
  mach = Machine(case, allocs, op_paths, re.compile(r"cfop(\d+)"))
  comp = Compiler(mach)
  funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
  entry = None
  for f in funcs:
    if len(f.regions[0].blocks) and "llvm.emit_c_interface" in f.attributes:
      entry = f
  if entry is None:
    raise Unsupported("no kernel entry function")
  block = entry.regions[0].blocks[0]
  ops = list(block.operations)
  launch = [o for o in ops if o.operation.name == "gpu.launch"]
  if len(launch) != 1:
    raise Unsupported("op gpu.launch (not exactly one)")
  launch = launch[0]
  host_steps = []
  for o in ops:
    if o.operation.name == "gpu.launch":
      break
    host_steps.append(comp.op(o))
  # GMEM: one buffer per kernel argument (the memref casts the host function makes carry
  # `mosaic_gpu.from_kernel_arg_idx`), matched in order with the case's inputs, then its outputs;
  # arguments of neither (GMEM semaphores, the keep-alive output) get zeroed buffers of their type.
  arg_types = {}
  for o in ops:
    if o.operation.name == "builtin.unrealized_conversion_cast" and \
        "mosaic_gpu.from_kernel_arg_idx" in o.operation.attributes:
      k = int(str(o.operation.attributes["mosaic_gpu.from_kernel_arg_idx"]).split(":")[0])
      mt = _memref_type(o.operation.results[0].type)
      arg_types[k] = (list(mt.shape), str(mt.element_type))
  pending_in, pending_out = list(case.inputs), list(range(len(case.outputs)))
  arg_ptrs = ARGS_BASE
  mach.output_buffers = {}
  for k in range(max(arg_types, default=-1) + 1):
    shape, et = arg_types.get(k, ([1], "i8"))
    base = GMEM_BASE + k * GMEM_STRIDE
    if pending_in and _same_array(pending_in[0], shape, et):
      spec = pending_in.pop(0)
      data = bytearray(cfjax_fill.fill_bytes(spec))
    elif not pending_in and pending_out and _same_array(case.outputs[pending_out[0]], shape, et):
      spec = case.outputs[pending_out[0]]
      mach.output_buffers[pending_out.pop(0)] = len(mach.gmem)
      data = bytearray(_nbytes(spec))
    else:
      spec = {}
      data = bytearray(max(1, int(math.prod(shape) * _elem_bytes(et))))
    mach.gmem.append((base, data, spec))
    mach.mem[arg_ptrs + 8 * k] = base
  if pending_in or pending_out:
    raise Unsupported("kernel arguments that do not match the case's arrays")
  eargs = list(block.arguments)
  host = Thread(mach, 0, 0, [1, 1, 1], [1, 1, 1])
  host.env = [None] * 0
  # Compile the launch body before sizing the environment.
  lops = launch.operation
  body = lops.regions[0].blocks[0]
  body_steps = comp.block(body)
  # The block-wide barrier at the entry of each thread-collective run_scoped: where canonicalize
  # merged it into the barrier before it, no op is left to attribute its wait to.
  for path, cop, _ in case.walk():
    if (cop["op"] == "run_scoped" and case.mesh.thread_name is not None
        and cop.get("collective_axes") in ([case.mesh.thread_name], case.mesh.thread_name)
        and path in op_paths and op_paths.index(path) not in mach.barrier_labels):
      raise Unsupported(f"block sync of {path} merged into the barrier before it (canonicalize)")
  nslots = len(comp.slots) + 8
  host.env = [None] * (nslots + 64)
  host.env[comp.slot(eargs[0])] = 0
  host.env[comp.slot(eargs[1])] = arg_ptrs
  host.env.extend([None] * (len(comp.slots) + 8 - len(host.env)))
  for s in run_steps(host, host_steps):
    raise Unsupported("a host step blocked")
  # Launch operands, through the op's accessors.
  lv = launch.opview if hasattr(launch, "opview") else launch
  val = lambda v: None if v is None else uniform(host.env[comp.slot(v)], "launch operand")  # noqa: E731
  grid = [val(lv.gridSizeX), val(lv.gridSizeY), val(lv.gridSizeZ)]
  block_sz = [val(lv.blockSizeX), val(lv.blockSizeY), val(lv.blockSizeZ)]
  cluster = [val(lv.clusterSizeX), val(lv.clusterSizeY), val(lv.clusterSizeZ)]
  if cluster[0] is None:
    cluster = [1, 1, 1]
  smem_size = val(lv.dynamicSharedMemorySize) or 0
  if list(cluster) != mach.cluster3:
    raise Unsupported(f"the launch's cluster {cluster} differs from the case's {mach.cluster3}")
  if block_sz[1] != 1 or block_sz[2] != 1 or block_sz[0] % LANES:
    raise Unsupported("block shape")
  mach.num_wgs = block_sz[0] // LANES
  # cuLaunchKernelEx's limits are the driver's: a launch past them is not evaluated.
  if block_sz[0] > 1024 or grid[1] > 65535 or grid[2] > 65535 or math.prod(cluster) > 16:
    raise Unsupported("launch: block, grid or cluster past the driver's limits (cuLaunchKernelEx is "
                      "not run)")
  sentinel = cfjax_fill.SMEM_SENTINEL
  for _ in range(mach.num_ctas):
    mach.smem.append(bytearray([sentinel]) * int(smem_size))
    mach.bars.append({})
    mach.waits.append([])
    mach.sync_gen.append(0)
    mach.sync_arrived.append(0)
  # Block arguments of the launch body.
  bargs = list(body.arguments)
  threads = []
  for cta in range(mach.num_ctas):
    for wg in range(mach.num_wgs):
      th = Thread(mach, cta, wg, block_sz, grid)
      th.env = list(host.env) + [None] * (len(comp.slots) + 8 - len(host.env))
      c = th.cluster_id
      vals_b = [c[0], c[1], c[2], th.tid, 0, 0, grid[0], grid[1], grid[2], block_sz[0], 1, 1,
                0, 0, 0, cluster[0], cluster[1], cluster[2]]
      for a, v in zip(bargs, vals_b):
        th.env[comp.slot(a)] = v
      threads.append((th, run_steps(th, body_steps)))
  # The canonical schedule.
  live = list(threads)
  while live:
    progressed = False
    nxt = []
    for th, gen in live:
      before = mach.steps
      try:
        next(gen)
        nxt.append((th, gen))
      except StopIteration:
        progressed = True
        # A CTA's buffers are read when its last warpgroup finishes: the end of its scopes, as
        # the reference snapshots them (later multicast bytes from other CTAs are not seen).
        mach.finished[th.cta] += 1
        if mach.finished[th.cta] == mach.num_wgs:
          mach.snapshots[th.cta] = bytes(mach.smem[th.cta])
        continue
      if mach.steps != before:
        progressed = True
    live = nxt
    if not progressed and live:
      # A full round without one step: every live warpgroup waits on something nothing will bring.
      break
  deadlock = bool(live)
  return _outcome(mach, case, deadlock)


_IR_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
              "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "int4": "i4", "uint4": "i4",
              "int8": "i8", "uint8": "i8", "int16": "i16", "uint16": "i16", "int32": "i32",
              "uint32": "i32", "int64": "i64", "uint64": "i64"}


def _same_array(spec, shape, et) -> bool:
  return [int(d) for d in spec["shape"]] == list(shape) and _IR_DTYPES.get(spec["dtype"]) == et


def _nbytes(spec):
  n = math.prod(int(d) for d in spec["shape"]) if spec["shape"] else 1
  return (n * cfjax_fill.DTYPE_BITS[spec["dtype"]] + 7) // 8


def _outcome(mach: Machine, case, deadlock) -> dict:
  ctas = []
  smem_allocs = [(n, a) for n, a in mach.allocs.items() if a["kind"] == "smem"]
  bar_allocs = [(n, a) for n, a in mach.allocs.items() if a["kind"] != "smem"]
  for rank, coords in enumerate(mach.ctas):
    bars = []
    for name, a in bar_allocs:
      unit = 1
      if a["kind"] == "barrier" and not a["orders_tensor_core"]:
        unit = LANES
      for i in range(a["num_barriers"]):
        b = mach.bars[rank].get(a["offset"] + 8 * i)
        if b is None:
          continue
        pend = b.pending
        pend_u = (pend + unit - 1) // unit if pend >= 0 else -((-pend + unit - 1) // unit)
        bars.append({"alloc": name, "index": i, "count": b.expected // unit,
                     "arrivals": b.arrivals // unit, "armed": b.armed, "received": b.received,
                     "phases": b.phases, "pending": pend_u, "tx": b.tx})
    bufs = []
    for name, a in smem_allocs:
      nb = _nbytes({"shape": a["shape"], "dtype": a["dtype"]})
      if a["offset"] + nb > len(mach.smem[rank]):
        raise Unsupported(f"smem buffer {name} ends past the kernel's dynamic SMEM")
      mem = mach.snapshots.get(rank, mach.smem[rank])
      data = bytes(mem[a["offset"]:a["offset"] + nb])
      bufs.append({"alloc": name, "hex": data.hex(), "digest": cfjax_fill.fnv1a64(data)})
    waits = sorted(mach.waits[rank], key=lambda w: w["thread"])
    ctas.append({"rank": rank, "coords": list(coords), "barriers": bars, "waits": waits,
                 "buffers": bufs})
  out = {"kind": "deadlock" if deadlock else "completed", "ctas": ctas}
  if case.outputs:
    written = cfjax_case.written_ranges(case)
    recs = []
    for k, spec in enumerate(case.outputs):
      data = bytes(mach.gmem[mach.output_buffers[k]][1])
      recs.append({"name": spec["name"], "hex": data.hex(), "digest": cfjax_fill.fnv1a64(data),
                   "written": written.get(spec["name"], [])})
    out["outputs"] = recs
  return out
