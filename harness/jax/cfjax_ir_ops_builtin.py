"""jax-ir ops of the `builtin` dialect: `builtin.unrealized_conversion_cast` (the value unchanged;
a host array loaded by llvm.load is passed on by its address: the TMA descriptors' array).
Registers into cfjax_ir_core.OPS: builtin.unrealized_conversion_cast.
"""

from __future__ import annotations

from cfjax_ir_core import LV, register


@register("builtin.unrealized_conversion_cast")
def unrealized_conversion_cast(comp, op, ins, outs):
  a, o = ins[0], outs[0]
  src = str(op.operands[0].type)
  dst = str(op.results[0].type)

  def step(th):
    v = th.env[a]
    if isinstance(v, tuple) and not isinstance(v, LV) and v and v[0] == "host-array":
      v = v[1]  # the TMA descriptors' host array, passed to the kernel by address
    th.env[o] = v
  _ = (src, dst)
  return comp.simple(step)
