"""jax-ir ops of the `vector` dialect: only an accumulator's zero value and its reshapes, which no
case reads, so each result is None (as llvm.bitcast / llvm.insertelement, cfjax_ir_ops_llvm).
Registers into cfjax_ir_core.OPS: vector.broadcast, extract_strided_slice, extract, bitcast.
"""

from __future__ import annotations

from cfjax_ir_core import register


@register("vector.broadcast", "vector.extract_strided_slice", "vector.extract", "vector.bitcast")
def accumulator(comp, op, ins, outs):
  return comp.const(outs, None)
