"""jax-ir ops of `arith` that convert between element types: a vector_store's `astype`.

FragmentedArray.astype (a vector_store's {"convert": ...}, lax.convert_element_type;
docs/case-format.md "vector_store") emits, on each lane's `vector<N x T>` (0.11.2 and 0.12.0.1,
Lane and Warpgroup alike): `arith.truncf` (float narrowing; float16 <-> bfloat16 is `extf` to f32
and then `truncf`: one rounding, the `extf` being exact), `arith.extf` (float widening),
`arith.sitofp` / `arith.uitofp` (an integer to a float, by the source's signedness), `arith.fptosi`
/ `arith.fptoui` (a float to an integer, by the target's signedness; under Warpgroup after a clamp
to the target's range, `min.NaN`/`max.NaN` inline PTX: cfjax_ir_ops_ptx), `arith.trunci` (integer
narrowing), `arith.extsi` / `arith.extui` (integer widening, by the source's signedness), and
nothing for a same-width int <-> uint. What PTX's `cvt` does with them on sm_90:
- a float result is rounded once to nearest even (`cvt.rn`), overflowing to infinity, subnormals
  kept (no `.ftz`); an integer becomes the nearest float of the target, ties to even, rounded once
  from the exact integer (int32 -> bfloat16 included: XLA on the CPU rounds that through float32,
  twice; the mosaic profile's hardware does not);
- a float becomes an integer truncated toward zero (`cvt.rzi`), saturated to the target's range,
  a NaN giving 0 (PTX's `cvt` float-to-integer rule; LLVM's fptosi/fptoui leave an out-of-range
  operand undefined, and the reference does not compare those elements);
- integers wrap when narrowed and extend by the source's signedness.
Values are the elements' bit patterns (cfjax_ir_ops_vector); on a scalar the same conversion gives
the result's bits (an int). A conversion of None (an accumulator's value) stays None.
Registers into cfjax_ir_core.OPS: arith.truncf, extf, sitofp, uitofp, fptosi, fptoui, trunci,
extsi, extui (the integer casts on scalars too: index and address arithmetic), and arith.bitcast.
"""

from __future__ import annotations

import math

import numpy as np

from cfjax_ir_core import register, signed, width
from cfjax_ir_extract import Unsupported
from cfjax_ir_ops_vector import scalar_bits, vector_type

# Significant bits (the implicit one included) of each float type an integer may become.
_PRECISION = {"f32": 24, "f16": 11, "bf16": 8}
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32}


def _np_float(et: str):
  if et == "bf16":
    import ml_dtypes  # pylint: disable=import-outside-toplevel
    return ml_dtypes.bfloat16
  if et in ("f16", "f32"):
    return {"f16": np.float16, "f32": np.float32}[et]
  raise Unsupported(f"type {et}")


def _uint(bits: int):
  return {16: np.uint16, 32: np.uint32}[bits]


def _elem(t):
  """(element type name, bits, element count or None for a scalar) of a type."""
  vt = vector_type(t)
  if vt is not None:
    return vt[1], vt[2], math.prod(vt[0])
  s = str(t)
  if s in _FLOAT_BITS:
    return s, _FLOAT_BITS[s], None
  return s, width(s), None


def float_value(b: int, et: str) -> float:
  """The value (a Python float: NaN, infinities, subnormals included) of an element's bits."""
  return float(np.array(b & ((1 << _FLOAT_BITS[et]) - 1), _uint(_FLOAT_BITS[et]))
               .view(_np_float(et)))


def float_bits(x: float, et: str) -> int:
  """The bits of the float of type `et` nearest `x`, a value of float32 (every f16 and bf16 is
  one): rounded once, ties to even (numpy's float32 -> float16 and ml_dtypes' float32 -> bfloat16
  are correctly rounded), beyond the largest finite value by half an ulp or more: infinity."""
  with np.errstate(over="ignore"):
    return int(np.array(x, np.float32).astype(_np_float(et)).view(_uint(_FLOAT_BITS[et])))


def round_int(v: int, et: str) -> int:
  """The bits of the float of type `et` nearest the integer v, ties to even, rounded once (PTX
  `cvt.rn.f32.s32`, `cvt.rn.bf16.s32`, ...); infinity beyond the largest finite value."""
  p = _PRECISION[et]
  a = abs(v)
  n = a.bit_length()
  if n > p:
    shift = n - p
    q, rem = a >> shift, a & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
      q += 1
    a = q << shift  # p + 1 bits at most: exact in float64 and in float32's exponent range
  x = float(-a if v < 0 else a)
  bits = _FLOAT_BITS[et]
  with np.errstate(over="ignore"):
    # x has at most p significant bits: float64 -> et is exact, or overflows to infinity
    return int(np.array(x, np.float64).astype(_np_float(et)).view(_uint(bits)))


def to_int(x: float, bits: int, is_signed: bool) -> int:
  """PTX `cvt.rzi.{s,u}N.f*`: x truncated toward zero, saturated to the N-bit range (a NaN is 0),
  as N bits."""
  lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed else (0, (1 << bits) - 1)
  if math.isnan(x):
    r = 0
  elif math.isinf(x):
    r = hi if x > 0 else lo
  else:
    r = min(max(math.trunc(x), lo), hi)
  return r & ((1 << bits) - 1)


def _converter(name: str, src: str, sb: int, dst: str, db: int):
  """The element function (bits -> bits) of conversion op `name` from (src, sb) to (dst, db)."""
  if name in ("arith.truncf", "arith.extf"):
    if src not in _FLOAT_BITS or dst not in _FLOAT_BITS:
      raise Unsupported(f"op {name} from {src} to {dst}")
    # f32 holds every f16 and bf16 exactly: f16 <-> bf16 (not emitted: extf + truncf) rounds once
    return lambda b: float_bits(float_value(b, src), dst)
  if name in ("arith.sitofp", "arith.uitofp"):
    if dst not in _PRECISION or src in _FLOAT_BITS:
      raise Unsupported(f"op {name} from {src} to {dst}")
    if name == "arith.sitofp":
      return lambda b: round_int(signed(b, sb), dst)
    return lambda b: round_int(b & ((1 << sb) - 1), dst)
  if name in ("arith.fptosi", "arith.fptoui"):
    if src not in _FLOAT_BITS or dst in _FLOAT_BITS:
      raise Unsupported(f"op {name} from {src} to {dst}")
    is_signed = name == "arith.fptosi"
    return lambda b: to_int(float_value(b, src), db, is_signed)
  mask = (1 << db) - 1
  if name == "arith.extsi":
    return lambda b: signed(b, sb) & mask
  return lambda b: b & mask  # extui (held unsigned already), trunci


@register("arith.truncf", "arith.extf", "arith.sitofp", "arith.uitofp", "arith.fptosi",
          "arith.fptoui", "arith.trunci", "arith.extsi", "arith.extui")
def convert(comp, op, ins, outs):
  name = op.name
  src, sb, n = _elem(op.operands[0].type)
  dst, db, _ = _elem(op.results[0].type)
  conv = _converter(name, src, sb, dst, db)
  if name in ("arith.trunci", "arith.extsi", "arith.extui") and n is None:
    # scalar integer casts (index and address arithmetic): ints
    return comp.unary(ins, outs, lambda v: None if v is None else conv(v))

  def elements(v):
    if v is None:
      return None  # an accumulator's value: never read by a case
    return tuple(conv(int(e)) for e in v)

  def scalar(v):
    if v is None:
      return None
    return conv(scalar_bits(v, src, sb))
  return comp.unary(ins, outs, elements if n is not None else scalar)


@register("arith.bitcast")
def bitcast(comp, op, ins, outs):
  """The same bits in another type of the same width: a scalar (a splat's register under Lane,
  `max.NaN.bf16` of two constants: bf16 <-> i16) becomes its bits (an int); a vector's elements
  are bits already."""
  src, sb, n = _elem(op.operands[0].type)
  _, db, m = _elem(op.results[0].type)
  if sb != db or (n is None) != (m is None):
    raise Unsupported(f"op arith.bitcast from {op.operands[0].type} to {op.results[0].type}")
  if n is not None:
    return comp.unary(ins, outs, lambda v: v)
  return comp.unary(ins, outs, lambda v: None if v is None else scalar_bits(v, src, sb))
