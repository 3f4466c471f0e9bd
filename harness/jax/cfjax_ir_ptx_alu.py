"""jax-ir's inline PTX blocks of 32-bit register arithmetic: `{ .reg .b32 s<3>; prmt.b32 ...;
and.b32 ...; sub.bf16x2 $0, ...; }`, as FragmentedArray.astype emits them for int8 -> bfloat16
(`upcast_i8_to_bf16`, 0.11.2 and 0.12.0.1 alike: a byte of the source moved into a bf16 whose
exponent makes the mantissa the integer, then the sign's weight subtracted).

A block is run statement by statement on Python ints (32-bit patterns), per lane. Modelled, from
the PTX ISA: `prmt.b32 d, a, b, c` (the default mode: each result byte picked from the eight bytes
of {b, a} by a nibble of c, its top bit replicating the picked byte's sign), `and`/`or`/`xor.b32`,
`shl.b32`, `shr.u32`/`shr.s32` (a count past 31 clamped to 32), `mov.b32` of a register or an
immediate, `lop3.b32 d, a, b, c, lut` and `add`/`sub`/`mul.bf16x2` / `.f16x2` (each 16-bit half
rounded once to nearest even; a NaN result the canonical NaN). Operands are `$k` (the asm's
operands, outputs first), the block's own `.reg .b32` registers and decimal or hex immediates;
every operand and result is an i32 scalar (constraint `r`). Anything else is Unsupported, so the
case stays "unavailable (ptx ...)".
"""

from __future__ import annotations

import itertools
import math
import re

from cfjax_ir_core import lift
from cfjax_ir_extract import Unsupported
from cfjax_ir_ops_convert import float_bits, float_value
from cfjax_ir_ops_vector import CANONICAL_NAN

_M32 = 0xFFFFFFFF


def _packed(op: str, ty: str, a: int, b: int) -> int:
  """Each 16-bit half of a and b as a float of `ty`, `op` computed exactly in a double and rounded
  once to `ty` (cfjax_ir_ops_convert.float_bits rounds through float32: 53 >= 2 * 24 + 2 and
  24 >= 2 * 11 + 2 bits, so the double rounding is innocuous); a NaN is the canonical one."""
  out = 0
  for half in (0, 16):
    x = float_value((a >> half) & 0xFFFF, ty)
    y = float_value((b >> half) & 0xFFFF, ty)
    r = x + y if op == "add" else x - y if op == "sub" else x * y
    out |= (CANONICAL_NAN[ty] if math.isnan(r) else float_bits(r, ty)) << half
  return out


def prmt(a: int, b: int, c: int) -> int:
  """PTX `prmt.b32 d, a, b, c` (default mode)."""
  src = (a & _M32) | ((b & _M32) << 32)
  out = 0
  for k in range(4):
    sel = (c >> (4 * k)) & 0xF
    byte = (src >> (8 * (sel & 7))) & 0xFF
    if sel & 8:
      byte = 0xFF if byte & 0x80 else 0
    out |= byte << (8 * k)
  return out


def lop3(a: int, b: int, c: int, lut: int) -> int:
  out = 0
  for i in range(32):
    idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
    out |= ((lut >> idx) & 1) << i
  return out


def _shr_signed(a: int, n: int) -> int:
  v = a - (1 << 32) if a >> 31 else a
  return (v >> min(n, 32)) & _M32


_BINARY = {
    "and.b32": lambda a, b: a & b,
    "or.b32": lambda a, b: a | b,
    "xor.b32": lambda a, b: a ^ b,
    "shl.b32": lambda a, b: (a << min(b, 32)) & _M32,
    "shr.u32": lambda a, b: a >> min(b, 32),
    "shr.b32": lambda a, b: a >> min(b, 32),
    "shr.s32": _shr_signed,
}
for _op in ("add", "sub", "mul"):
  for _ty in ("bf16", "f16"):
    _BINARY[f"{_op}.{_ty}x2"] = (lambda o, t: lambda a, b: _packed(o, t, a, b))(_op, _ty)

_BLOCK = re.compile(r"\{ (.*) \}")
_REG_DECL = re.compile(r"\.reg \.b32 ([\w<>, ]+)")
_STMT = re.compile(r"([a-z0-9.]+) (.+)")


def _declared(decl: str) -> set[str]:
  names = set()
  for part in decl.split(","):
    part = part.strip()
    m = re.fullmatch(r"(\w+)<(\d+)>", part)
    if m:
      names.update(f"{m.group(1)}{i}" for i in range(int(m.group(2))))
    elif re.fullmatch(r"\w+", part):
      names.add(part)
    else:
      raise Unsupported(f"ptx register declaration {decl!r}")
  return names


def parse_block(text: str):
  """The statements [(opcode, dest, [operands])] of a block of 32-bit register arithmetic, or
  None when `text` is not one (then another family may know it)."""
  m = _BLOCK.fullmatch(text)
  if not m:
    return None
  stmts, regs = [], set()
  for raw in m.group(1).split(";"):
    s = raw.strip()
    if not s:
      continue
    d = _REG_DECL.fullmatch(s)
    if d:
      regs |= _declared(d.group(1))
      continue
    st = _STMT.fullmatch(s)
    if not st:
      return None
    opcode = st.group(1)
    args = [a.strip() for a in st.group(2).split(",")]
    arity = {"prmt.b32": 4, "lop3.b32": 5, "mov.b32": 2}.get(opcode, 3)
    if (opcode not in _BINARY and arity == 3) or len(args) != arity:
      return None
    stmts.append((opcode, args[0], args[1:]))
  if not stmts:
    return None
  return stmts, regs


def run_block(stmts, regs: set[str], operands: dict[int, int]) -> dict[int, int]:
  """Runs the statements on one lane: `operands` holds the inputs' bits by operand number; the
  result holds every `$k` the block wrote."""
  env: dict[str, int] = {}
  out: dict[int, int] = {}

  def read(x: str) -> int:
    if x.startswith("$"):
      k = int(x[1:])
      if k not in operands:
        raise Unsupported(f"ptx reads output operand {x}")
      return operands[k]
    if x in regs:
      if x not in env:
        raise Unsupported(f"ptx reads {x} before it is written")
      return env[x]
    try:
      return int(x, 0) & _M32
    except ValueError:
      raise Unsupported(f"ptx operand {x!r}") from None

  for opcode, dest, args in stmts:
    vals = [read(a) for a in args]
    if opcode == "prmt.b32":
      r = prmt(*vals)
    elif opcode == "lop3.b32":
      r = lop3(*vals)
    elif opcode == "mov.b32":
      r = vals[0]
    else:
      r = _BINARY[opcode](*vals) & _M32
    if dest.startswith("$"):
      out[int(dest[1:])] = r
    elif dest in regs:
      env[dest] = r
    else:
      raise Unsupported(f"ptx writes {dest!r}")
  return out


# Bit patterns tried for an operand's undefined 16-bit half: a result that differs between them
# depends on it.
_UNDEF_SAMPLES = (0x0000, 0xFFFF, 0x5A3C)


def _operand_words(v, ty: str) -> list[int]:
  """The 32-bit patterns an operand may hold: one, or one per sample of its undefined half (a
  `vector<2xi16>` register packs element 0 low; a None element is an undefined pad)."""
  if ty == "i32":
    return [int(v) & _M32]
  lo, hi = v
  halves = [[h] if h is not None else list(_UNDEF_SAMPLES) for h in (lo, hi)]
  return [(a & 0xFFFF) | ((b & 0xFFFF) << 16) for a in halves[0] for b in halves[1]]


def alu_block_step(comp, op, text: str, ins, outs):
  """The simple step of an inline-asm block of 32-bit register arithmetic, or None when `text`
  is no such block. Operands are i32 or `vector<2xi16>` (two elements in one `r` register), the
  one result an i32."""
  parsed = parse_block(text)
  if parsed is None:
    return None
  stmts, regs = parsed
  types = [str(v.type) for v in op.operands]
  if len(outs) != 1 or str(op.results[0].type) != "i32" or \
      any(t not in ("i32", "vector<2xi16>") for t in types):
    raise Unsupported(f"ptx block on {types}")
  n_out = len(outs)

  def f(*args):
    if any(a is None for a in args):
      raise Unsupported("ptx block of an accumulator's value")
    results = set()
    choices = [_operand_words(a, t) for a, t in zip(args, types)]
    for words in itertools.product(*choices):
      got = run_block(stmts, regs, {n_out + i: w for i, w in enumerate(words)})
      if 0 not in got:
        raise Unsupported("ptx block that does not write $0")
      results.add(got[0])
    if len(results) != 1:
      raise Unsupported("ptx block whose result depends on an undefined element")
    return results.pop()

  def block(th):
    th.env[outs[0]] = lift(f, *(th.env[i] for i in ins))
  return comp.simple(block)
