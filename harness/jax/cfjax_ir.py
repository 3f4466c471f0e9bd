"""The `ir` mode of the JAX executor (`jax-ir`, docs/ir-executor.md): the case lowered as in
`lower` mode, and the lowered Mosaic GPU module evaluated for every CTA on the CPU.

Called by cfjax_execute.Executor (`run(executor, case)`, for mode `ir`), whose `_trace` it uses; it
does not import cfjax_execute (the stage of a lowering error is cfjax_stage's). The evaluator is
cfjax_ir_eval (and the modules it names); what lowering records is cfjax_ir_extract's.
"""

from __future__ import annotations

import os
import sys
import traceback

import cfjax_ir_eval
import cfjax_ir_extract
from cfjax_case import Case
from cfjax_ir_extract import Undefined, Unsupported
from cfjax_stage import Stage, lowering_stage


def run(ex, case: Case) -> dict:
  rec = cfjax_ir_extract.Extracted()
  with cfjax_ir_extract.recording(rec):
    t, traced, _ = ex._trace(case, None)  # pylint: disable=protected-access
    try:
      traced.lower(lowering_platforms=("cuda",))
    except Exception as e:  # pylint: disable=broad-except
      raise Stage(lowering_stage(e), e) from e
  if rec.module_text is None:
    return {"kind": "unavailable", "reason": "no Mosaic GPU module was lowered"}
  try:
    arch = case.target["arch"]
    if arch == "sm_80":
      raise Unsupported("compile: sm_80 (ptxas, which checks the PTX against the arch, is not run)")
    if arch != "sm_100a" and any(w in rec.module_text
                                 for w in ("tcgen05", "cta_group", "clusterlaunchcontrol")):
      raise Unsupported("compile: sm_100 PTX on sm_90a (ptxas is not run)")
    if arch != "sm_90a" and "wgmma" in rec.module_text:
      raise Unsupported(f"compile: wgmma (sm_90a only) on {arch} (ptxas is not run)")
    allocs = cfjax_ir_extract.map_allocs(case, rec)
    text = cfjax_ir_extract.planted_edit(rec.module_text, case.name)
    from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
    try:
      module = ir.Module.parse(text, context=rec.context)
    except ir.MLIRError as e:
      raise Unsupported(f"the (edited) module does not parse: {str(e)[:200]}") from e
    with rec.context:
      out = cfjax_ir_eval.evaluate(module, case, allocs, list(t.op_paths))
  except Undefined as u:
    return {"kind": "undefined", "undefined": {"code": u.code, "detail": u.detail}}
  except Unsupported as u:
    if os.environ.get("CFJAX_DEBUG"):
      traceback.print_exc(file=sys.stderr)
    return {"kind": "unavailable", "reason": str(u)}
  return out
