"""jax-ir ops of the `arith` dialect: integer constants, arithmetic, comparisons and casts.

Integers are held unsigned, masked to the result type's width; the signed ops reinterpret them.
A float constant is its Python float (the type holds it exactly); a splat `dense<c>` vector
constant, and addi/subi/muli, andi/ori/xori, shli/shrui/shrsi and minui/maxui/minsi/maxsi on
vectors, are vector values
(cfjax_ir_ops_vector).
Registers into cfjax_ir_core.OPS: arith.constant, addi, subi, muli, andi, ori, xori, shli, shrui, shrsi,
divui, remui, divsi, remsi, minui, maxui, minsi, maxsi, cmpi, select, index_cast, index_castui
(extui, extsi and trunci, scalar and vector, are cfjax_ir_ops_convert's). The integer ops are also
the llvm dialect's (cfjax_ir_ops_llvm).
"""

from __future__ import annotations

import math
import re

from cfjax_ir_core import lift, register, signed, width
from cfjax_ir_extract import Unsupported
from cfjax_ir_ops_vector import binary_int, scalar_bits, vector_type


def _tdiv(x, y):
  """Integer division rounding toward zero (LLVM's sdiv)."""
  q = abs(x) // abs(y)
  return q if (x >= 0) == (y >= 0) else -q


def _w(op):
  return width(op.results[0].type)


def _div(f):
  def g(a, b):
    if b == 0:
      raise Unsupported("division by zero")
    return f(a, b)
  return g


@register("arith.constant")
def constant(comp, op, ins, outs):
  v = op.attributes["value"]
  s = str(v)
  if s in ("true", "false"):
    return comp.const(outs, 1 if s == "true" else 0)
  vt = vector_type(op.results[0].type)
  if vt is not None:
    return comp.const(outs, _dense(v, s, vt))
  m = re.fullmatch(r"(-?\d+) : (\w+)", s)
  if m is None:
    if re.fullmatch(r"\S+ : b?f\d+", s):
      from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
      return comp.const(outs, float(ir.FloatAttr(v).value))  # exact: the type holds it
    raise Unsupported(f"op arith.constant {s[:40]}")
  w = width(m.group(2))
  return comp.const(outs, int(m.group(1)) & ((1 << w) - 1))


def _dense(v, s, vt):
  """A splat `dense<c> : vector<...>` as a vector value (cfjax_ir_ops_vector): each element c's
  bits; a dense constant of several values is not modelled."""
  from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
  shape, et, bits = vt
  attr = ir.DenseElementsAttr(v)
  if not attr.is_splat:
    raise Unsupported(f"op arith.constant {s[:40]}")
  c = attr.get_splat_value()
  c = float(ir.FloatAttr(c).value) if et in ("f16", "bf16", "f32", "f64") else \
      int(ir.IntegerAttr(c).value)
  return (scalar_bits(c, et, bits),) * math.prod(shape)


def _int_op(f, op, comp, ins, outs):
  """An integer op on scalars or, element-wise, on vectors; f(a, b) of unsigned ints, masked."""
  if vector_type(op.results[0].type) is not None:
    return binary_int(comp, op, ins, outs, f)
  mask = (1 << _w(op)) - 1
  return comp.binary(ins, outs, lambda a, b: f(a, b) & mask)


@register("arith.addi")
def addi(comp, op, ins, outs):
  return _int_op(lambda a, b: a + b, op, comp, ins, outs)


@register("arith.subi")
def subi(comp, op, ins, outs):
  return _int_op(lambda a, b: a - b, op, comp, ins, outs)


@register("arith.muli")
def muli(comp, op, ins, outs):
  return _int_op(lambda a, b: a * b, op, comp, ins, outs)


@register("arith.andi")
def andi(comp, op, ins, outs):
  return _int_op(lambda a, b: a & b, op, comp, ins, outs)


@register("arith.ori")
def ori(comp, op, ins, outs):
  return _int_op(lambda a, b: a | b, op, comp, ins, outs)


@register("arith.xori")
def xori(comp, op, ins, outs):
  return _int_op(lambda a, b: a ^ b, op, comp, ins, outs)


def _shift(name: str, f):
  """arith.shli/shrui/shrsi on scalars or, element-wise, on vectors (a vector_store's shifts by a
  constant): f(a, amount, width) of unsigned ints. A scalar amount at or past the width gives 0
  (the index arithmetic's shifts never reach it); on a vector it is LLVM's poison, which no
  case reaches and which this executor does not run."""
  def handler(comp, op, ins, outs):
    vt = vector_type(op.results[0].type)
    w = vt[2] if vt is not None else _w(op)

    def g(a, b):
      if b >= w:
        if vt is not None:
          raise Unsupported(f"op {name} by {b} on i{w} (poison)")
        return 0
      return f(a, b, w)
    return _int_op(g, op, comp, ins, outs)
  return handler


shli = register("arith.shli")(_shift("arith.shli", lambda a, b, w: a << b))
shrui = register("arith.shrui")(_shift("arith.shrui", lambda a, b, w: a >> b))
shrsi = register("arith.shrsi")(_shift("arith.shrsi", lambda a, b, w: signed(a, w) >> b))


@register("arith.divui")
def divui(comp, op, ins, outs):
  return comp.binary(ins, outs, _div(lambda a, b: a // b))


@register("arith.remui")
def remui(comp, op, ins, outs):
  return comp.binary(ins, outs, _div(lambda a, b: a % b))


@register("arith.divsi")
def divsi(comp, op, ins, outs):
  w = _w(op)
  return comp.binary(ins, outs, _div(
      lambda a, b: _tdiv(signed(a, w), signed(b, w)) & ((1 << w) - 1)))


@register("arith.remsi")
def remsi(comp, op, ins, outs):
  w = _w(op)

  def rem(a, b):
    x, y = signed(a, w), signed(b, w)
    return (x - _tdiv(x, y) * y) & ((1 << w) - 1)
  return comp.binary(ins, outs, _div(rem))


def _min_max(pick, is_signed: bool):
  """arith.minui/maxui/minsi/maxsi on scalars or, element-wise, on vectors (a vector_store's
  jnp.minimum/maximum of 32-bit integers): the operand `pick` (min or max) chooses, compared
  unsigned or as two's complement of the width."""
  def handler(comp, op, ins, outs):
    vt = vector_type(op.results[0].type)
    w = vt[2] if vt is not None else _w(op)
    key = (lambda v: signed(v, w)) if is_signed else None
    return _int_op(lambda a, b: pick(a, b, key=key), op, comp, ins, outs)
  return handler


for _name, _pick, _signed in (("arith.minui", min, False), ("arith.maxui", max, False),
                              ("arith.minsi", min, True), ("arith.maxsi", max, True)):
  register(_name)(_min_max(_pick, _signed))


@register("arith.cmpi")
def cmpi(comp, op, ins, outs):
  pred = str(op.attributes["predicate"]).split(":")[0].strip()
  w = width(op.operands[0].type)
  code = int(pred)
  fs = {0: lambda a, b: a == b, 1: lambda a, b: a != b,
        2: lambda a, b: signed(a, w) < signed(b, w), 3: lambda a, b: signed(a, w) <= signed(b, w),
        4: lambda a, b: signed(a, w) > signed(b, w), 5: lambda a, b: signed(a, w) >= signed(b, w),
        6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b, 9: lambda a, b: a >= b}
  f = fs[code]
  return comp.binary(ins, outs, lambda a, b: 1 if f(a, b) else 0)


@register("arith.select")
def select(comp, op, ins, outs):
  c, a, b, o = ins[0], ins[1], ins[2], outs[0]

  def step(th):
    env = th.env
    env[o] = lift(lambda x, y, z: y if x else z, env[c], env[a], env[b])
  return comp.simple(step)


@register("arith.index_cast")
def index_cast(comp, op, ins, outs):
  wi, wo = width(op.operands[0].type), _w(op)
  return comp.unary(ins, outs, lambda a: signed(a, wi) & ((1 << wo) - 1))


@register("arith.index_castui")
def index_castui(comp, op, ins, outs):
  wo = _w(op)
  return comp.unary(ins, outs, lambda a: a & ((1 << wo) - 1))
