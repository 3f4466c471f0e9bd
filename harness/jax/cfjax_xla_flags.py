"""The XLA flags every JAX process of collfuzz runs with, set before JAX is imported.

XLA's CPU backend lets LLVM contract `a * b + c` into one fused multiply-add where the host has FMA
instructions: float32 on every x86-64 with FMA3, float16 on hosts with AVX512-FP16. A contracted
op rounds once where Mosaic GPU's PTX (and collfuzz's prediction of interpret mode) rounds after
each op, and the result would depend on the machine. `--xla_cpu_max_isa=AVX` keeps XLA's CPU code
to AVX, which has no FMA: every op rounds once, on any machine (docs/case-format.md, "vector_store",
Arithmetic)."""

from __future__ import annotations

import os

CPU_ISA_FLAG = "--xla_cpu_max_isa=AVX"


def pin_cpu_isa(environ=os.environ) -> None:
  """Adds CPU_ISA_FLAG to XLA_FLAGS unless the caller already picked an ISA."""
  flags = environ.get("XLA_FLAGS", "")
  if "--xla_cpu_max_isa" not in flags:
    environ["XLA_FLAGS"] = (flags + " " + CPU_ISA_FLAG).strip()
