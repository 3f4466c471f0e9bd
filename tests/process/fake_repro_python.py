#!/usr/bin/env python3
"""Stands in for the campaign's JAX Python in the test of the finding scripts the campaign runs
(tests/generators/campaign_repro_run_test.sh).

Started with a finding's script (a .py file in a folder named `findings`), it does what
$FAKE_SCRIPT_MODE says:
  pass    prints the script's "as predicted" line and exits 0 (JAX agrees with the reference)
  fail    raises AssertionError as a script does when JAX disagrees (the finding reproduces)
  broken  raises ValueError (a broken script)
  sleep   never ends (the campaign's budget runs out)
  real    runs the script with $FAKE_REAL_PYTHON (the JAX venv's Python): a real run
Started with anything else (collfuzz_jax.py: the JAX executor), it is the fake external executor
(fake_executor.py, as $FAKE_EXECUTOR_MODE says).
"""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
script = sys.argv[1] if len(sys.argv) > 1 else ""
if not (script.endswith(".py") and
        os.path.basename(os.path.dirname(os.path.abspath(script))) == "findings"):
    os.execv(sys.executable, [sys.executable, os.path.join(here, "fake_executor.py")] + sys.argv[1:])
mode = os.environ.get("FAKE_SCRIPT_MODE", "pass")
if mode == "real":
    real = os.environ["FAKE_REAL_PYTHON"]
    os.execv(real, [real, script])
if mode == "pass":
    print("as predicted: fake")
    sys.exit(0)
if mode == "fail":
    raise AssertionError("output out[0, 1]: expected 2, got 0 (1 of 8 compared elements differ) [fake]")
if mode == "sleep":
    time.sleep(1000)
raise ValueError("fake broken script")
