"""jax-ir ops of the `vector` dialect, and the vector forms of `arith`'s element-wise ops.

A vector value (one lane's `vector<N x T>`, rank 1 or more, held flat in row-major order) is a
tuple of its elements' bit patterns, unsigned, masked to T's width (floats too: f16 and bf16 are
16-bit patterns, f32 a 32-bit one); a uniform one is that tuple, a lane-dependent one an LV of
them. That is what `vector.load`, `vector.store` (a vector_store's `ref[...] = value` under Lane
semantics: each lane loads or stores its N consecutive elements of SMEM or GMEM) and
`vector.broadcast` of a scalar make and read. Integer ops wrap; float ops (`arith.addf`, `subf`,
`mulf`) round each result to nearest even in T (f16 and bf16 computed in f32, which is exact before
the one rounding: 24 >= 2 * 11 + 2 bits, so the double rounding is innocuous), subnormals kept, as
PTX's `add.rn`/`mul.rn` without `.ftz`. A `fastmath<contract>` flag on them is ignored: a fused
multiply-add that LLVM or ptxas may form below the module (one rounding) is not modelled.
A broadcast of no value (a WGMMA accumulator's zero, never read by a case) stays None, as do
vector.extract_strided_slice, vector.extract and vector.bitcast (and llvm.bitcast /
insertelement, cfjax_ir_ops_llvm).
Registers into cfjax_ir_core.OPS: vector.broadcast, load, store, extract_strided_slice, extract,
bitcast, arith.addf, subf, mulf; `binary_int` and `vector_type` are arith's for addi/subi/muli
and dense constants.
"""

from __future__ import annotations

import math
import re

import numpy as np

from cfjax_ir_core import (GMEM_BASE, HOST_BASE, LANES, LV, lane, lift, register, uniform)
from cfjax_ir_extract import Unsupported

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _np_float(et: str):
  if et == "bf16":
    import ml_dtypes  # pylint: disable=import-outside-toplevel
    return ml_dtypes.bfloat16
  if et in _FLOATS:
    return _FLOATS[et]
  raise Unsupported(f"type {et}")


def _uint(bits: int):
  return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def vector_type(t):
  """(shape, element type name, element bits) of a `vector<...>` type, or None for another."""
  s = str(t)
  m = re.fullmatch(r"vector<((?:\d+x)+)(\w+)>", s)
  if m is None:
    return None
  shape = [int(d) for d in m.group(1).split("x") if d]
  et = m.group(2)
  im = re.fullmatch(r"i(\d+)", et)
  bits = int(im.group(1)) if im else _BITS.get(et)
  if bits is None or bits < 8 or bits % 8:
    raise Unsupported(f"type {s}")
  return shape, et, bits


def scalar_bits(v, et: str, bits: int) -> int:
  """A scalar (an int held unsigned, or the Python float of a float constant) as T's bits."""
  if isinstance(v, float) or (et in _BITS and not isinstance(v, int)):
    return int(np.array(v, _np_float(et)).view(_uint(bits)))
  return int(v) & ((1 << bits) - 1)


def binary_int(comp, op, ins, outs, f):
  """arith.addi/subi/muli on vectors: f(a, b) of each element pair, masked to the width."""
  _, _, bits = vector_type(op.results[0].type)
  mask = (1 << bits) - 1
  return comp.binary(ins, outs, lambda a, b: tuple(f(x, y) & mask for x, y in zip(a, b)))


def _float_op(name, f):
  @register(name)
  def handler(comp, op, ins, outs):
    vt = vector_type(op.results[0].type)
    if vt is None:
      raise Unsupported(f"op {name} on {op.results[0].type}")
    _, et, bits = vt
    dt, ut = _np_float(et), _uint(bits)
    compute = np.float32 if et in ("f16", "bf16") else dt

    def g(a, b):
      x = np.array(a, ut).view(dt).astype(compute)
      y = np.array(b, ut).view(dt).astype(compute)
      with np.errstate(all="ignore"):
        r = f(x, y).astype(dt)
      return tuple(int(v) for v in r.view(ut))
    return comp.binary(ins, outs, g)
  return handler


_float_op("arith.addf", lambda x, y: x + y)
_float_op("arith.subf", lambda x, y: x - y)
_float_op("arith.mulf", lambda x, y: x * y)


@register("vector.broadcast")
def broadcast(comp, op, ins, outs):
  vt = vector_type(op.results[0].type)
  src = str(op.operands[0].type)
  if vt is None or src.startswith("vector<"):
    return comp.const(outs, None)  # an accumulator's reshape: never read by a case
  shape, et, bits = vt
  n = math.prod(shape)
  a, o = ins[0], outs[0]

  def step(th):
    v = th.env[a]
    if v is None:
      th.env[o] = None  # an accumulator's zero: never read by a case
      return
    th.env[o] = lift(lambda x: (scalar_bits(x, et, bits),) * n, v)
  return comp.simple(step)


@register("vector.extract_strided_slice", "vector.extract", "vector.bitcast")
def accumulator(comp, op, ins, outs):
  return comp.const(outs, None)


def _access(th, m, idx, n, nbytes):
  """(memory, byte offset) lane by lane of `n` consecutive elements at `memref[idx...]`: a list
  of (lane, bytearray, offset) for the active lanes, lane order."""
  mach = th.mach
  d = uniform(th.env[m], "memref")
  if n > 1 and d[4] and d[4][-1] != 1:
    raise Unsupported("vector load/store along a strided dim")
  out = []
  for i in range(LANES):
    if th.mask is not None and not th.mask[i]:
      continue
    off = d[2] + sum(lane(th.env[k], i) * s for k, s in zip(idx, d[4]))
    addr = d[1] + off * nbytes
    if addr >= HOST_BASE - (1 << 21):
      raise Unsupported("vector load/store of host memory")
    if addr >= GMEM_BASE:
      base, data, _ = mach.gmem_at(addr)
      at = addr - base
    else:
      r, at = mach.smem_of(th.cta, addr)
      data = mach.smem[r]
    if at < 0 or at + n * nbytes > len(data):
      raise Unsupported("vector load/store past the end of its memory")
    out.append((i, data, at))
  return out


@register("vector.load")
def load(comp, op, ins, outs):
  shape, _, bits = vector_type(op.results[0].type)
  n, nb = math.prod(shape), bits // 8
  m, idx, o = ins[0], ins[1:], outs[0]

  def step(th):
    vals = {}
    for i, data, at in _access(th, m, idx, n, nb):
      vals[i] = tuple(int.from_bytes(data[at + k * nb:at + (k + 1) * nb], "little")
                      for k in range(n))
    zero = (0,) * n  # an inactive lane's value is never used
    th.env[o] = LV(vals.get(i, zero) for i in range(LANES))
  return comp.simple(step)


@register("vector.store")
def store(comp, op, ins, outs):
  shape, _, bits = vector_type(op.operands[0].type)
  n, nb = math.prod(shape), bits // 8
  v, m, idx = ins[0], ins[1], ins[2:]

  def step(th):
    val = th.env[v]
    if val is None:
      raise Unsupported("vector.store of an accumulator's value")
    for i, data, at in _access(th, m, idx, n, nb):
      elems = lane(val, i)
      data[at:at + n * nb] = b"".join(int(e).to_bytes(nb, "little") for e in elems)
  return comp.simple(step)
