"""Telling apart the stage a JAX exception was raised in (docs/outcome-format.md, "Stages").

The lowest layer the JAX executor's modes share: `Stage` (a JAX exception with its stage),
`unwrap` (the original exception behind JAX/XLA's wrappers) and `lowering_stage` (where an error
of `.lower()` for CUDA was raised). It imports no other cfjax_* module, so that cfjax_execute (every
mode) and cfjax_ir (the `ir` mode, which cfjax_execute calls) both use it without importing each
other.

In `lower`, `gpu` and `ir` modes, errors of `.lower()` are split by where they were raised (the
traceback): the resource estimator -> `estimate`, a Pallas lowering rule -> `lower`, the Mosaic GPU
dialect lowering -> `dialect`, MLIR verification -> `verify`, the host-side descriptor setup after
the dialect lowering -> `finalize`, anything else in module construction -> `module`.
"""

from __future__ import annotations

import re
import traceback


class Stage(Exception):
  """An exception raised by JAX, with the stage it was raised in."""

  def __init__(self, stage: str, exc: BaseException, op: str | None = None):
    super().__init__(stage)
    self.stage = stage
    self.exc = exc
    self.op = op



_WRAPPED_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Exit|Interrupt)): ",
                         re.MULTILINE)


def unwrap(exc: BaseException) -> tuple[str, str]:
  """(class name, message) of the original exception behind JAX/XLA wrappers, as best we can."""
  seen = set()
  e = exc
  while e is not None and id(e) not in seen:
    seen.add(id(e))
    name = type(e).__name__
    if name not in ("XlaRuntimeError", "JaxRuntimeError", "RuntimeError"):
      return name, str(e)
    cause = e.__cause__ or e.__context__
    # JAX's traceback filtering chains a JaxStackTraceBeforeTransformation (the user's source
    # line) as the cause of the exception a rule raised: that exception is the original (a
    # RuntimeError such as _iota_lowering's), not a wrapper.
    if cause is not None and type(cause).__name__ == "JaxStackTraceBeforeTransformation":
      return name, str(e)
    e = cause
  # An exception from inside a callback reaches Python as XlaRuntimeError("INTERNAL: ...") whose
  # text ends with the original traceback; take its last "Name: message" line.
  text = str(exc)
  m = None
  for m in _WRAPPED_RE.finditer(text):
    pass
  if m is not None and m.group(1).split(".")[-1] not in ("XlaRuntimeError", "JaxRuntimeError"):
    return m.group(1).split(".")[-1], text[m.end():].rstrip("\n")
  return type(exc).__name__, text


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
  frames = []
  e, seen = exc, set()
  while e is not None and id(e) not in seen:
    seen.add(id(e))
    frames.extend(traceback.extract_tb(e.__traceback__))
    e = e.__cause__ or e.__context__
  return frames


def lowering_stage(exc: BaseException) -> str:
  """estimate / lower / verify / dialect / finalize / module for an exception raised while
  lowering for CUDA."""
  frames = _frames(exc)
  names = [(f.filename.replace("\\", "/"), f.name) for f in frames]
  # MLIR verification of the module after the Pallas rules.
  if type(exc).__name__ == "VerificationError" or any(fn == "mlir_error_to_verification_error" for _, fn in names):
    return "verify"
  # Host-side TMA descriptor setup, after the dialect lowering (Scratch.finalize_size).
  if any(fn == "finalize_size" for _, fn in names):
    return "finalize"
  # The Mosaic GPU dialect's passes after the Pallas rules: layout inference (Warpgroup), then
  # its lowering.
  if any(n.endswith("mosaic/gpu/dialect_lowering.py") or n.endswith("mosaic/gpu/layout_inference.py")
         for n, _ in names):
    return "dialect"
  if any("estimat" in fn for _, fn in names):
    return "estimate"
  # A Pallas lowering rule (lower_jaxpr_to_mosaic_gpu runs the rules).
  if any(fn == "lower_jaxpr_to_mosaic_gpu" for _, fn in names):
    return "lower"
  return "module"
