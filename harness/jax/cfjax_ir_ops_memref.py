"""jax-ir ops of the `memref` dialect: views of a memref descriptor
`(allocated, aligned, offset, (sizes), (strides))`, and loads and stores of host memory (8 bytes a
word; a load or store of device memory is not modelled).
Registers into cfjax_ir_core.OPS: memref.reinterpret_cast, view, subview, collapse_shape,
expand_shape, transpose, cast,
extract_strided_metadata, extract_aligned_pointer_as_index, alloca, store, load.
"""

from __future__ import annotations

import math
import re

from cfjax_ir_core import (HOST_BASE, LANES, LV, attrs, ints, lane, memref_type, register, signed,
                           static_shape_strides, uniform)
from cfjax_ir_extract import Unsupported

_DYNAMIC = -9223372036854775808  # ShapedType::kDynamic in static_offsets/sizes/strides


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


@register("memref.reinterpret_cast")
def reinterpret_cast(comp, op, ins, outs):
  dynsent = _DYNAMIC
  at = attrs(op)
  offs, sizes, strides = (ints(at[n]) for n in ("static_offsets", "static_sizes", "static_strides"))
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
          x = signed(uniform(th.env[dyn[k]], "reinterpret_cast operand"), 64)
          k += 1
        out.append(x)
      vals.append(out)
    th.env[o] = (d[0], d[1], vals[0][0] if vals[0] else 0, tuple(vals[1]), tuple(vals[2]))
  return comp.simple(step)


@register("memref.view")
def view(comp, op, ins, outs):
  _, shape, strides, _ = static_shape_strides(op.results[0].type)
  if len(ins) != 2:
    raise Unsupported("op memref.view (dynamic sizes)")
  a, sh, o = ins[0], ins[1], outs[0]

  def step(th):
    d = uniform(th.env[a], "memref")
    shift = uniform(th.env[sh], "view shift")
    p = d[1] + d[2] + shift
    th.env[o] = (p, p, 0, tuple(shape), tuple(strides))
  return comp.simple(step)


@register("memref.subview")
def subview(comp, op, ins, outs):
  st = lambda n: ints(op.attributes[n])  # noqa: E731
  offs, sizes, steps = st("static_offsets"), st("static_sizes"), st("static_strides")
  res_shape = list(memref_type(op.results[0].type).shape)
  dynsent = _DYNAMIC
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
        x = signed(uniform(th.env[dyn[k]], "subview offset"), 64)
        k += 1
      off += x * d[4][i]
    full = [(sizes[i], d[4][i] * steps[i]) for i in range(len(sizes))]
    th.env[o] = (d[0], d[1], off, *_rank_reduced(full, res_shape))
  return comp.simple(step)


def _reassociation(op):
  """[[0, 1], [2]] of a collapse_shape / expand_shape."""
  groups = re.findall(r"\[([\d, ]*)\]", str(op.attributes["reassociation"]))
  return [[int(x) for x in g.split(",") if x.strip()] for g in groups]


@register("memref.collapse_shape")
def collapse_shape(comp, op, ins, outs):
  # Each group of source dims becomes one dim: its sizes' product, its innermost stride (the
  # group is contiguous, or the op would not verify).
  groups = _reassociation(op)
  a, o = ins[0], outs[0]

  def step(th):
    d = uniform(th.env[a], "memref")
    sizes = tuple(math.prod(d[3][i] for i in g) for g in groups)
    strides = tuple(d[4][g[-1]] if g else 1 for g in groups)
    th.env[o] = (d[0], d[1], d[2], sizes, strides)
  return comp.simple(step)


@register("memref.expand_shape")
def expand_shape(comp, op, ins, outs):
  # Each source dim becomes its group of dims (the result type's static sizes), row-major.
  groups = _reassociation(op)
  res_shape = list(memref_type(op.results[0].type).shape)
  if any(x < 0 for x in res_shape):
    raise Unsupported("op memref.expand_shape (dynamic sizes)")
  a, o = ins[0], outs[0]

  def step(th):
    d = uniform(th.env[a], "memref")
    strides = [0] * len(res_shape)
    for src, g in enumerate(groups):
      inner = d[4][src]
      for i in reversed(g):
        strides[i] = inner
        inner *= res_shape[i]
    th.env[o] = (d[0], d[1], d[2], tuple(res_shape), tuple(strides))
  return comp.simple(step)


@register("memref.transpose")
def transpose(comp, op, ins, outs):
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
  return comp.simple(step)


@register("memref.cast")
def cast(comp, op, ins, outs):
  # Only a change of static type information: the descriptor is the same.
  _, shape, strides, offset = static_shape_strides(op.results[0].type)
  a, o = ins[0], outs[0]

  def step(th):
    d = uniform(th.env[a], "memref")
    if any(x >= 0 and x != y for x, y in zip(shape, d[3])) or any(
        x >= 0 and x != y for x, y in zip(strides, d[4])):
      raise Unsupported("op memref.cast (to a layout the value does not have)")
    th.env[o] = d
  return comp.simple(step)


@register("memref.extract_strided_metadata")
def extract_strided_metadata(comp, op, ins, outs):
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
  return comp.simple(step)


@register("memref.extract_aligned_pointer_as_index")
def extract_aligned_pointer_as_index(comp, op, ins, outs):
  a, o = ins[0], outs[0]

  def step(th):
    th.env[o] = uniform(th.env[a], "memref")[1]
  return comp.simple(step)


@register("memref.alloca")
def alloca(comp, op, ins, outs):
  _, shape, strides, _ = static_shape_strides(op.results[0].type)
  n = math.prod(shape) if shape else 1
  o = outs[0]
  mach = comp.m

  def step(th):
    p = mach.host_alloc(8 * n)
    th.env[o] = (p, p, 0, tuple(shape), tuple(strides))
  return comp.simple(step)


def _mem_addr(th, m, idx):
  d = uniform(th.env[m], "memref")
  off = d[2] + sum(uniform(th.env[i], "memref index") * s for i, s in zip(idx, d[4]))
  if d[1] < HOST_BASE - (1 << 21):
    raise Unsupported("memref.load/store of device memory")
  return d[1] + 8 * off


@register("memref.store")
def store(comp, op, ins, outs):
  v, m, idx = ins[0], ins[1], ins[2:]
  mach = comp.m

  def step(th):
    addr = _mem_addr(th, m, idx)
    new = th.env[v]
    if th.mask is not None:
      old = mach.mem.get(addr, 0)
      new = LV(lane(new, i) if th.mask[i] else lane(old, i) for i in range(LANES))
    mach.mem[addr] = new
  return comp.simple(step)


@register("memref.load")
def load(comp, op, ins, outs):
  m, idx, o = ins[0], ins[1:], outs[0]
  mach = comp.m

  def step(th):
    addr = _mem_addr(th, m, idx)
    if addr not in mach.mem:
      raise Unsupported("memref.load of memory never stored")
    th.env[o] = mach.mem[addr]
  return comp.simple(step)
