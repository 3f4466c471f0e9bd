#!/usr/bin/env python3
"""Writes a collfuzz case as a standalone JAX script (`collfuzz repro`, docs/python.md).

    cfjax_repro.py            reads JSON lines {"case", "mode", "expected", "match", "collfuzz",
                              "jax", "command"} on stdin, answers one JSON line {"script"} or
                              {"error"} per request

The script builds the kernel exactly as the JAX executor's adapter does (cfjax_translate.py:
`plgpu.kernel` or `pl.pallas_call`, the mesh, one `pl.run_scoped` per scope, the copies, barriers,
waits and `pl.when` blocks, inputs filled as cfjax_fill.py fills them, `jax.enable_x64` around
everything when a 64-bit dtype appears, the case's arch for lower mode), runs it the way
cfjax_execute.py runs it (stage by stage), and asserts the outcome that collfuzz's reference
predicts for that mode: the exception's class and message, or the written output elements and the
completion of every wait. What it cannot see without the adapter's instrumentation (SMEM contents,
barrier counts) is stated in a comment, not asserted.

Only the standard library, numpy and ml_dtypes are used here (no JAX import): generating is fast.

Where it lives: this file is the entry point (generate, the stdin/stdout loop); the script's parts
are written by

    cfjax_repro_src.py       Unsupported, ident, the spelling of axis names, dtypes, shapes
    cfjax_repro_modes.py     Request (the mode and the outcome it asserts), the script's main()
    cfjax_repro_prologue.py  the script's docstring, header comments and imports
    cfjax_repro_body.py      Writer: the kernel body, op by op (cfjax_translate.py's mirror)
    cfjax_repro_kernel.py    kernel_body, make_kernel (the mesh), make_inputs (fills), collfuzz_case
    cfjax_repro_checks.py    the predicted outcome as assertions: check_raised, check_outputs

(cfjax_repro_run.py, beside them, is not part of the generator: it runs written scripts.)
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=wrong-import-position
from cfjax_repro_body import Writer, needs_x64  # noqa: E402,F401
from cfjax_repro_checks import CHECK_ARRAY, RAISED, emit_checks, emit_raised, runs  # noqa: E402,F401
from cfjax_repro_kernel import HELPERS, emit_collfuzz_case, emit_inputs, emit_kernel  # noqa: E402,F401
from cfjax_repro_modes import DEADLOCK_SECONDS, Request, emit_main  # noqa: E402,F401
from cfjax_repro_prologue import emit_prologue  # noqa: E402
from cfjax_repro_src import Unsupported, ident  # noqa: E402,F401

# The names this module had before it was split (tests/jax/test_repro.py reads _RAISED).
_RAISED = RAISED
_HELPERS = HELPERS


def generate(req: dict) -> str:
  """One request {"case", "mode", "expected", "match", "collfuzz", "jax", "command", "fix"} -> the
  script's text; Unsupported names what the generator cannot write."""
  r = Request(req)

  w = Writer(r.case, r.mode)
  w.body(r.case["program"], 1, "$.program")
  body_lines = w.lines

  L: list[str] = []
  E = L.append
  emit_prologue(E, r, req)
  emit_kernel(E, r, body_lines)
  emit_inputs(E, r)
  emit_raised(E)
  emit_checks(E, r, req)
  emit_collfuzz_case(E, r.grid, r.inputs, r.x64)
  emit_main(E, r)
  return "\n".join(L) + "\n"


def main() -> int:
  for line in sys.stdin:
    line = line.strip()
    if not line:
      continue
    try:
      req = json.loads(line)
      out = {"script": generate(req)}
    except Unsupported as e:
      out = {"error": str(e)}
    except (KeyError, TypeError, ValueError) as e:
      out = {"error": f"the case cannot be written as a script: {type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
  return 0


if __name__ == "__main__":
  sys.exit(main())
