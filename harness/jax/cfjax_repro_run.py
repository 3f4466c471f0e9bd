#!/usr/bin/env python3
"""Runs many `collfuzz repro` scripts in one Python process (docs/python.md).

    cfjax_repro_run.py SCRIPT.py... [--out RESULTS.json]

Each script runs as `__main__` in a fresh namespace (runpy), as `python SCRIPT.py` would run it,
but JAX is imported and initialised once. A script passes when it returns, fails when it raises
AssertionError (JAX did not do what collfuzz predicts), and is an error on any other exception
(the script itself is broken). Interpret mode's global state is reset after each script. Prints
one line per script that did not pass and a summary; --out writes {script: {status, detail,
seconds}}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import runpy
import sys
import time
import traceback

import cfjax_xla_flags

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# A script that predicts a deadlock leaves the kernel's threads hung; standalone it ends its process
# with os._exit, here it returns (this runner ends the process that way once every script ran).
os.environ["COLLFUZZ_REPRO_IN_PROCESS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
cfjax_xla_flags.pin_cpu_isa()  # each script pins it too; here JAX is imported once for all


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("scripts", nargs="+")
  ap.add_argument("--out")
  args = ap.parse_args(argv)
  import jax  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  try:
    from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks  # pylint: disable=import-outside-toplevel
    reset = gpu_callbacks.reset_gpu_interpret_mode_state
  except Exception:  # pylint: disable=broad-except
    reset = lambda: None  # noqa: E731
  results = {}
  counts = {"pass": 0, "fail": 0, "error": 0}
  t_all = time.monotonic()
  for path in args.scripts:
    t = time.monotonic()
    status, detail = "pass", ""
    sink = io.StringIO()
    try:
      with contextlib.redirect_stdout(sink):
        runpy.run_path(path, run_name="__main__")
    except AssertionError as e:
      status, detail = "fail", str(e).strip().splitlines()[0][:300] if str(e).strip() else "AssertionError"
    except Exception as e:  # pylint: disable=broad-except
      status, detail = "error", f"{type(e).__name__}: {e}"[:300] + "\n" + traceback.format_exc()[-1500:]
    finally:
      with contextlib.suppress(Exception):
        reset()
    counts[status] += 1
    results[os.path.basename(path)] = {"status": status, "detail": detail,
                                       "seconds": round(time.monotonic() - t, 3)}
    if status != "pass":
      print(f"{status.upper()} {path}: {detail.splitlines()[0] if detail else ''}")
  print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors "
        f"in {time.monotonic() - t_all:.1f} s")
  if args.out:
    with open(args.out, "w", encoding="utf-8") as f:
      json.dump(results, f, indent=1)
  return 0 if counts["error"] == 0 else 1


if __name__ == "__main__":
  rc = main()
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(rc)  # threads a deadlocked kernel left hung would hold the interpreter at exit
