"""jax-ir ops of the `scf` dialect: structured control flow, SIMT style. A uniform condition runs
one side; a lane-dependent one runs each side that has lanes under that lane mask, in order (then
before else; switch cases, then the default), and merges the yielded values lane by lane.
Loop bounds must be uniform.
Registers into cfjax_ir_core.OPS: scf.yield, scf.if, scf.index_switch, scf.for.
"""

from __future__ import annotations

from cfjax_ir_core import LANES, LV, ints, lane, register, run_steps, uniform
from cfjax_ir_extract import Unsupported


def _region_steps(comp, region):
  blocks = list(region.blocks)
  if len(blocks) != 1:
    raise Unsupported("a region with more than one block")
  return comp.block(blocks[0]), blocks[0]


@register("scf.yield")
def yield_(comp, op, ins, outs):
  def step(th):
    th.yielded = [th.env[i] for i in ins]
  return comp.simple(step)


def _run_branch(th, steps, mask):
  saved = th.mask
  th.mask = mask
  th.yielded = []
  try:
    yield from run_steps(th, steps)
  finally:
    th.mask = saved
  return th.yielded


def _select(th, outs, cases):
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


@register("scf.if")
def if_(comp, op, ins, outs):
  regions = list(op.regions)
  then_steps, _ = _region_steps(comp, regions[0])
  else_steps = _region_steps(comp, regions[1])[0] if regions[1].blocks else None
  c = ins[0]

  def step(th):
    cond = th.env[c]
    if not isinstance(cond, LV) or all(x == cond[0] for x in cond):
      cv = lane(cond, 0)
      if cv:
        ys = yield from _run_branch(th, then_steps, th.mask)
      elif else_steps is not None:
        ys = yield from _run_branch(th, else_steps, th.mask)
      else:
        ys = []
      _select(th, outs, [(None, ys)])
      return
    base = th.mask or [True] * LANES
    tm = [base[i] and bool(cond[i]) for i in range(LANES)]
    em = [base[i] and not cond[i] for i in range(LANES)]
    cases = []
    if any(tm):
      cases.append((tm, (yield from _run_branch(th, then_steps, tm))))
    if any(em) and else_steps is not None:
      cases.append((em, (yield from _run_branch(th, else_steps, em))))
    if outs:
      _select(th, outs, cases)
  step.gen = True
  return step


@register("scf.index_switch")
def index_switch(comp, op, ins, outs):
  case_vals = ints(op.attributes["cases"])
  regions = list(op.regions)
  default = _region_steps(comp, regions[0])[0]
  branches = [_region_steps(comp, r)[0] for r in regions[1:]]
  c = ins[0]

  def pick(v):
    for cv, br in zip(case_vals, branches):
      if v == cv:
        return br
    return default

  def step(th):
    v = th.env[c]
    if not isinstance(v, LV) or all(x == v[0] for x in v):
      ys = yield from _run_branch(th, pick(lane(v, 0)), th.mask)
      _select(th, outs, [(None, ys)])
      return
    base = th.mask or [True] * LANES
    cases = []
    for target in [*branches, default]:
      m = [base[i] and pick(v[i]) is target for i in range(LANES)]
      if any(m):
        cases.append((m, (yield from _run_branch(th, target, m))))
    if outs:
      _select(th, outs, cases)
  step.gen = True
  return step


@register("scf.for")
def for_(comp, op, ins, outs):
  steps, block = _region_steps(comp, list(op.regions)[0])
  args = [comp.slot(a) for a in block.arguments]
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
