"""jax-ir, the evaluator's core: values, the machine, the op table and the compiler that uses it.

The lowest layer of the evaluator (docs/ir-executor.md, "Where the evaluator lives"); it imports no
other cfjax_ir_* module. It holds:

- values: `LV` (one value per lane of a warpgroup), `lane`, `lift`, `uniform`, and the type and
  attribute helpers every op family shares (`width`, `elem_bytes`, `attrs`, `ints`, `signed`,
  `memref_type`, `static_shape_strides`, `loc_label`);
- the machine: `Machine` (one flat integer address space, SMEM and mbarriers per CTA), `Mbarrier`
  (harness/sim/mbarrier.h), `TmaDesc`, `Thread` (one warpgroup of one CTA) and `run_steps`;
- the op table `OPS` and the `register` decorator that fills it, and `Compiler`, which compiles
  each op once into a step through the table, plus the step builders the families share.

The table is filled by the family modules (cfjax_ir_ops_*.py), each registering its handlers when
imported; cfjax_ir_eval imports them all. A handler is `handler(comp, op, ins, outs)` and returns a
step (`step(th)`, with `step.gen` True where it is a generator that may block) or None (no effect).
"""

from __future__ import annotations

import collections
import re
from typing import Any, Callable

from cfjax_ir_extract import Unsupported

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

def width(t) -> int:
  s = str(t)
  if s == "index":
    return 64
  m = re.fullmatch(r"i(\d+)", s)
  if m:
    return int(m.group(1))
  if s.startswith("!llvm.ptr"):
    return 64
  raise Unsupported(f"type {s}")


def elem_bytes(t) -> float:
  s = str(t)
  table = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "index": 8, "f16": 2, "bf16": 2,
           "f32": 4, "f64": 8, "i4": 0.5, "f8E4M3FN": 1, "f8E5M2": 1, "!llvm.ptr": 8,
           "!llvm.ptr<3>": 8, "!mosaic_gpu.barrier": 8}
  if s in table:
    return table[s]
  m = re.fullmatch(r"vector<(\d+)x(\w+)>", s)  # a GEP over vectors (an SMEM ref's registers)
  if m and m.group(2) in table:
    return int(m.group(1)) * table[m.group(2)]
  raise Unsupported(f"type {s}")


def attrs(op) -> dict:
  out = {}
  for a in op.attributes:
    if isinstance(a, str):
      out[a] = op.attributes[a]
    else:
      out[a.name] = a.attr
  return out


def ints(attr):
  """The integers of a dense array attribute, `array<i32: 1, 2>` -> [1, 2]."""
  s = str(attr)
  if ":" in s:
    s = s.split(":", 1)[1]
  return [int(x) for x in re.findall(r"-?\d+", s)]


def signed(v, w):
  v &= (1 << w) - 1
  return v - (1 << w) if v >> (w - 1) else v


# ---- the memref / llvm descriptor: [allocated, aligned, offset, [sizes], [strides]]

def memref_type(t):
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  return ir.MemRefType(t)


def static_shape_strides(t):
  mt = memref_type(t)
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
  def __init__(self, base, bits, sizes, strides, window, swizzle, dtype=None):
    self.base, self.bits, self.sizes, self.strides, self.window = base, bits, sizes, strides, window
    self.swizzle = swizzle
    # mosaic_gpu_init_tma_desc's dtype code (launch_context._tma_dma_type): what a reducing store
    # combines elements as (5 f16, 6 f32, 7 bf16; 3/4 U32/U64, 9/10 S32/S64 for smin/smax).
    self.dtype = dtype


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

  def barrier_name(self, rank, off):
    for name, a in self.allocs.items():
      if a["kind"] in ("barrier", "cluster_barrier") and a["offset"] <= off < a["offset"] + 8 * a["num_barriers"]:
        return f"{name}[{(off - a['offset']) // 8}]"
    raise Unsupported("a wait on an mbarrier no case allocation owns")


def loc_label(loc_str, label_re):
  found = label_re.findall(loc_str)
  return int(found[-1]) if found else None


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


def warp_map_paths(program, prefix="$.program") -> list[str]:
  """The JSON paths of the case's warp_map ops (outermost ones; a nested warp_map never runs)."""
  found = []
  for i, op in enumerate(program if isinstance(program, list) else []):
    if not isinstance(op, dict):
      continue
    path = f"{prefix}[{i}]"
    if op.get("op") == "warp_map":
      found.append(path)
      continue
    for key, v in op.items():
      if isinstance(v, list) and v and all(isinstance(x, dict) and "op" in x for x in v):
        found += warp_map_paths(v, f"{path}.{key}")
  return found


def warp_order(mach, ops, steps):
  """A warp_map's body runs warp by warp, as the reference runs it (harness/core/warp_map.h: one
  copy of the body per warp, in warp order): the ops of `ops` whose location names an op inside a
  warp_map, with the unlabelled ops between them, become one step that runs them once per warp
  under that warp's lanes. The compiled body is one instruction stream for the 4 warps; run op by
  op across them, a copy's arrivals from every warp would come before any warp's transfer, an
  order the canonical schedule does not take (its phases can complete elsewhere)."""
  bodies = getattr(mach, "warp_bodies", None)
  if bodies is None:
    bodies = mach.warp_bodies = [p + "." for p in warp_map_paths(mach.case.raw.get("program"))]
  if not bodies:
    return steps
  inside = []
  for op in ops:
    label = loc_label(str(op.location), mach.label_re)
    path = mach.op_paths[label] if label is not None and label < len(mach.op_paths) else None
    inside.append(None if path is None else
                  next((b for b in bodies if path.startswith(b)), False))
  out, i = [], 0
  while i < len(ops):
    if not inside[i]:
      out.append(steps[i])
      i += 1
      continue
    end = i
    for j in range(i + 1, len(ops)):
      if inside[j] is False or (inside[j] and inside[j] != inside[i]):
        break
      if inside[j]:
        end = j
    out.append(_per_warp(steps[i:end + 1]))
    i = end + 1
  return out


def _per_warp(steps):
  warps = LANES // 32

  def step(th):
    base = th.mask
    for w in range(warps):
      m = [(base is None or base[i]) and i // 32 == w for i in range(LANES)]
      if not any(m):
        continue
      th.mask = m
      try:
        yield from run_steps(th, steps)
      finally:
        th.mask = base
  step.gen = True
  return step


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


# ---- the op table: op name -> handler(comp, op, ins, outs)

# Keyed by the op name with "." made "_" (`nvvm.mbarrier.try_wait.parity` ->
# `nvvm_mbarrier_try_wait_parity`), the spelling the evaluator has always looked ops up by.
OPS: dict[str, Callable] = {}


def _key(name: str) -> str:
  return name.replace(".", "_")


def register(*names: str):
  """Decorator: `handler` evaluates the ops `names` (full MLIR op names)."""
  def deco(handler):
    for name in names:
      k = _key(name)
      if k in OPS:
        raise ValueError(f"op {name} registered twice")
      OPS[k] = handler
    return handler
  return deco


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
    ops = list(block.operations)
    steps = [self.op(op) for op in ops]
    return warp_order(self.m, ops, steps)

  def op(self, op):
    op = op.operation if hasattr(op, "operation") else op
    name = op.name
    fn = OPS.get(_key(name))
    if fn is None:
      raise Unsupported(f"op {name}")
    ins = [self.slot(v) for v in op.operands]
    outs = [self.slot(r) for r in op.results]
    return fn(self, op, ins, outs)

  # helpers to build steps: step(th) -> None, or a generator for ops that may block
  @staticmethod
  def simple(f):
    f.gen = False
    return f

  def unary(self, ins, outs, f):
    a, o = ins[0], outs[0]

    def step(th):
      env = th.env
      env[o] = lift(f, env[a])
    return self.simple(step)

  def binary(self, ins, outs, f):
    a, b, o = ins[0], ins[1], outs[0]

    def step(th):
      env = th.env
      env[o] = lift(f, env[a], env[b])
    return self.simple(step)

  def const(self, outs, value):
    o = outs[0]

    def step(th):
      th.env[o] = value
    return self.simple(step)

  @staticmethod
  def pred_lanes(th, pred):
    """Lanes (in order) that are active and whose predicate holds."""
    p = th.env[pred] if pred is not None else 1
    return [i for i in range(LANES) if (th.mask is None or th.mask[i]) and lane(p, i)]
