"""jax-ir ops of the `vector` dialect, and the vector forms of `arith`'s element-wise ops.

A vector value (one lane's `vector<N x T>`, rank 1 or more, held flat in row-major order) is a
tuple of its elements' bit patterns, unsigned, masked to T's width (floats too: f16 and bf16 are
16-bit patterns, f32 a 32-bit one); a uniform one is that tuple, a lane-dependent one an LV of
them. That is what `vector.load`, `vector.store` (a vector_store's `ref[...] = value` under Lane
semantics: each lane loads or stores its N consecutive elements of SMEM or GMEM) and
`vector.broadcast` of a scalar make and read. Integer ops wrap; float ops (`arith.addf`, `subf`,
`mulf`: on vectors, or on two splats' scalar registers, giving the result's bits) round each
result to nearest even in T (f16 and bf16 computed in f32, which is exact before the one rounding:
24 >= 2 * 11 + 2 bits, so the double rounding is innocuous), subnormals kept, as PTX's
`add.rn`/`mul.rn` without `.ftz`. A `fastmath<contract>` flag on them is ignored: a fused
multiply-add that LLVM or ptxas may form below the module (one rounding) is not modelled.
A broadcast of no value (a WGMMA accumulator's zero, never read by a case) stays None, and so
does what vector.extract_strided_slice, vector.extract, vector.insert, vector.bitcast and
vector.shuffle make of None (and llvm.bitcast / insertelement, cfjax_ir_ops_llvm); of a known
vector they move its elements' bits (the element moves of FragmentedArray.max/min, below).
`min_max_bits` is PTX's `max`/`min` on an element's bits (`max.NaN.f32`, `max.NaN.f16x2`,
`max.s16`, ...: cfjax_ir_ops_ptx).
Registers into cfjax_ir_core.OPS: vector.broadcast, load, store, extract_strided_slice, extract,
insert, bitcast, shuffle, arith.addf, subf, mulf; `binary_int` and `vector_type` are arith's for
addi/subi/muli, andi/ori/xori, minui/maxui/minsi/maxsi and dense constants.
"""

from __future__ import annotations

import math
import re

import numpy as np

from cfjax_ir_core import (GMEM_BASE, HOST_BASE, LANES, LV, lane, lift, register, signed,
                           uniform, width)
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
    scalar = vt is None
    if scalar:  # two splats' registers (Lane: `jnp.full(...) - jnp.full(...)`): the bits
      et = str(op.results[0].type)
      if et not in ("f16", "bf16", "f32"):
        raise Unsupported(f"op {name} on {et}")
      bits = _BITS[et]
    else:
      _, et, bits = vt
    dt, ut = _np_float(et), _uint(bits)
    compute = np.float32 if et in ("f16", "bf16") else dt

    def g(a, b):
      if scalar:
        a, b = scalar_bits(a, et, bits), scalar_bits(b, et, bits)
      x = np.array(a, ut).view(dt).astype(compute)
      y = np.array(b, ut).view(dt).astype(compute)
      with np.errstate(all="ignore"):
        r = f(x, y).astype(dt)
      return int(r.view(ut)) if scalar else tuple(int(v) for v in r.view(ut))
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


# ---- vector element moves: extract, insert, bitcast, extract_strided_slice, shuffle. What
# FragmentedArray.max/min emit around their PTX (`_lift_fast_instr`: each f32 element extracted,
# `max.NaN.f32`, inserted into an `llvm.mlir.undef` vector; `_lift_fast_packed_instr`: 32-bit
# slices (extract_strided_slice), bitcast to vector<1xi32> (one 16-bit element: vector<1xi16>),
# extracted, the packed instruction, broadcast back, bitcast, concatenated by a shuffle). An
# extracted scalar is its bit pattern (an int), as a vector's elements are. None (an accumulator,
# or an undef vector) stays None; an undef vector that receives an insert holds None in the
# elements not inserted yet, which vector.store refuses.

def _array_ints(attr):
  """The integers of an ArrayAttr of IntegerAttrs (`[0, 2]`) or a dense array (`array<i64: 0>`)."""
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  try:
    return [int(ir.IntegerAttr(a).value) for a in ir.ArrayAttr(attr)]
  except (TypeError, ValueError):
    return [int(x) for x in re.findall(r"-?\d+", str(attr).split(":", 1)[-1])]


def _shape_of(t):
  """The shape and element type of a `vector<...>` type; a scalar is ([], its type)."""
  s = str(t)
  m = re.fullmatch(r"vector<((?:\d+x)+)(\w+)>", s)
  if m is None:
    return [], s
  return [int(d) for d in m.group(1).split("x") if d], m.group(2)


def _position(op, src_shape):
  """(flat offset, element count) that a static `vector.extract`/`insert` position names in a
  vector of `src_shape` (row-major); an Unsupported to raise (when a known value meets it) for
  a dynamic or odd one."""
  if len(op.operands) > (2 if op.name == "vector.insert" else 1):
    return Unsupported(f"{op.name} at a dynamic position")
  pos = _array_ints(op.attributes["static_position"])
  if len(pos) > len(src_shape) or any(p < 0 or p >= d for p, d in zip(pos, src_shape)):
    return Unsupported(f"{op.name} at position {pos} of vector{src_shape}")
  n = math.prod(src_shape[len(pos):])
  off = 0
  for p, d in zip(pos, src_shape):
    off = off * d + p
  return off * n, n


@register("vector.extract")
def extract(comp, op, ins, outs):
  shape, _ = _shape_of(op.operands[0].type)
  where = _position(op, shape)
  scalar = not str(op.results[0].type).startswith("vector<")

  def f(v):
    if v is None:
      return None  # an accumulator's element: never read by a case
    if isinstance(where, Unsupported):
      raise where
    at, n = where
    return v[at] if scalar else tuple(v[at:at + n])
  return comp.unary(ins, outs, f)


@register("vector.insert")
def insert(comp, op, ins, outs):
  shape, et = _shape_of(op.results[0].type)
  total = math.prod(shape)
  where = _position(op, shape)
  scalar = not str(op.operands[0].type).startswith("vector<")

  def f(x, dest):
    if x is None:
      return None
    if isinstance(where, Unsupported):
      raise where
    at, n = where
    dest = list(dest) if dest is not None else [None] * total
    if scalar:
      dest[at] = scalar_bits(x, et, _BITS.get(et) or width(et))
    else:
      dest[at:at + n] = x
    return tuple(dest)
  return comp.binary(ins, outs, f)


@register("vector.bitcast")
def bitcast(comp, op, ins, outs):
  """The same bits in another element type (element 0 the lowest bits, as LLVM on little-endian
  NVPTX): vector<2xf16> -> vector<1xi32> packs, vector<1xi32> -> vector<2xf16> unpacks."""
  t1, t2 = op.operands[0].type, op.results[0].type
  try:
    src, dst = vector_type(t1), vector_type(t2)
  except Unsupported:
    src = dst = None  # an accumulator's type (f8, i4): refused when a known value meets it
  b1, b2 = (src[2], dst[2]) if src and dst else (0, 0)
  n2 = math.prod(dst[0]) if dst else 0

  def f(v):
    if v is None:
      return None  # an accumulator's: never read by a case
    if not b1 or None in v:
      raise Unsupported(f"op vector.bitcast {t1} to {t2}")
    if b1 == b2:
      return v
    whole = sum(int(e) << (k * b1) for k, e in enumerate(v))
    return tuple((whole >> (k * b2)) & ((1 << b2) - 1) for k in range(n2))
  return comp.unary(ins, outs, f)


@register("vector.extract_strided_slice")
def extract_strided_slice(comp, op, ins, outs):
  shape, _ = _shape_of(op.operands[0].type)
  offsets = _array_ints(op.attributes["offsets"])
  sizes = _array_ints(op.attributes["sizes"])
  strides = _array_ints(op.attributes["strides"])

  def f(v):
    if v is None:
      return None  # an accumulator's slice: never read by a case
    if len(shape) != 1 or strides != [1]:
      raise Unsupported(f"vector.extract_strided_slice of vector{shape} (strides {strides})")
    return tuple(v[offsets[0]:offsets[0] + sizes[0]])
  return comp.unary(ins, outs, f)


@register("vector.shuffle")
def shuffle(comp, op, ins, outs):
  mask = _array_ints(op.attributes["mask"])
  rank = len(_shape_of(op.operands[0].type)[0])

  n_a = math.prod(_shape_of(op.operands[0].type)[0])
  n_b = math.prod(_shape_of(op.operands[1].type)[0])
  # An undefined pad beside a known 8- or 16-bit integer vector (utils.vector_concat([reg,
  # llvm.mlir_undef]): FragmentedArray.astype's int8 -> bfloat16 of two elements) is kept
  # element by element, its elements None (vector.bitcast refuses them; an inline-PTX block
  # checks that its result does not depend on them, cfjax_ir_ptx_alu). Accumulators (f32, i32)
  # stay None whole.
  pad = re.fullmatch(r"i(8|16)", str(_shape_of(op.results[0].type)[1])) is not None

  def f(a, b):
    if (a is None or b is None) and not (pad and (a is not None or b is not None)):
      return None
    a = (None,) * n_a if a is None else a
    b = (None,) * n_b if b is None else b
    if rank != 1:
      raise Unsupported(f"op vector.shuffle of {op.operands[0].type}")
    both = tuple(a) + tuple(b)
    return tuple(both[k] for k in mask)
  return comp.binary(ins, outs, f)


# ---- min / max of two elements' bits (PTX `max.NaN.f32`, `min.s16x2`, ... : cfjax_ir_ops_ptx)

CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}


def min_max_bits(is_max: bool, ty: str, a: int, b: int) -> int:
  """PTX `max`/`min` of two elements' bits, the result's bits. ty: `f32`, `f16`, `bf16` (the
  `.NaN` forms: a NaN operand gives the canonical NaN; otherwise the greater (lesser) operand
  exactly, subnormals kept, -0.0 below +0.0) or `s16`, `u16` (signed, unsigned); a packed
  `f16x2`, `bf16x2`, `s16x2`, `u16x2` is two 16-bit elements, the low half element 0."""
  if ty.endswith("x2"):
    one = ty[:-2]
    lo = min_max_bits(is_max, one, a & 0xFFFF, b & 0xFFFF)
    hi = min_max_bits(is_max, one, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF)
    return lo | (hi << 16)
  if ty in ("s16", "u16"):
    x, y = (signed(a, 16), signed(b, 16)) if ty == "s16" else (a & 0xFFFF, b & 0xFFFF)
    pick = x if (x >= y if is_max else x <= y) else y
    return pick & 0xFFFF
  if ty not in CANONICAL_NAN:
    raise Unsupported(f"min/max of {ty}")
  bits = _BITS[ty]
  a &= (1 << bits) - 1
  b &= (1 << bits) - 1
  x, y = (float(np.array(v, _uint(bits)).view(_np_float(ty))) for v in (a, b))
  if math.isnan(x) or math.isnan(y):
    return CANONICAL_NAN[ty]
  if x == y:  # equal values; of +0.0 and -0.0 the sign bit decides (-0.0 is the lesser)
    neg_a, neg_b = a >> (bits - 1), b >> (bits - 1)
    return (a if neg_a <= neg_b else b) if is_max else (a if neg_a >= neg_b else b)
  return a if (x > y) == is_max else b


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
      if elems is None or None in elems:
        raise Unsupported("vector.store of an undefined element (an undef vector's)")
      data[at:at + n * nb] = b"".join(int(e).to_bytes(nb, "little") for e in elems)
  return comp.simple(step)
