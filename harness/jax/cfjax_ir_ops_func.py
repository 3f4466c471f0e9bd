"""jax-ir ops of the `func` dialect: the host function's calls, of which only
`func.call @mosaic_gpu_init_tma_desc` (a TMA descriptor: cfjax_ir_core.TmaDesc) is modelled.
Registers into cfjax_ir_core.OPS: func.call, func.return.
"""

from __future__ import annotations

from cfjax_ir_core import TmaDesc, register, uniform
from cfjax_ir_extract import Unsupported

# mosaic_gpu_init_tma_desc's dtype code (launch_context._tma_dma_type) -> bits per element; 9 and
# 10 are S32 and S64, which a store with reduction_op smin/smax gets (3 and 4: U32, U64).
_TMA_BITS = {0: 4, 1: 8, 2: 16, 3: 32, 4: 64, 5: 16, 6: 32, 7: 16, 9: 32, 10: 64}


@register("func.call")
def call(comp, op, ins, outs):
  callee = str(op.attributes["callee"]).lstrip("@")
  if callee != "mosaic_gpu_init_tma_desc":
    raise Unsupported(f"op func.call @{callee}")
  mach = comp.m

  def step(th):
    e = th.env
    desc, base, dtype, rank, sizes, strides, swizzle, window = (uniform(e[i], "tma") for i in ins)
    if dtype not in _TMA_BITS:
      raise Unsupported(f"tma dtype {dtype}")
    rd = lambda p, k: mach.mem[p + 8 * k]  # noqa: E731
    mach.tma[desc] = TmaDesc(base, _TMA_BITS[dtype], [rd(sizes, k) for k in range(rank)],
                             [rd(strides, k) for k in range(rank)],
                             [rd(window, k) for k in range(rank)], swizzle, dtype)
  return comp.simple(step)


@register("func.return")
def return_(comp, op, ins, outs):
  return None
