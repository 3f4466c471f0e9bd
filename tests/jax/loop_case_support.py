"""Helpers shared by the adapter's tests (the loop tests test_loop_index.py, test_loop_slots.py,
test_arrive_and_wait.py; the vector, store and commit tests): a case run through cfjax_execute, an
output read back, a kernel file imported, a generated script run, the loops of a program."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np


# A kernel that loads an int32[128] input into SMEM and stores `%s` (an expression of smem and
# x_ref) to its output: the vector tests import their expressions through it.
VECTOR_STORE_KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(x_ref, o_ref, smem, bar):
    plgpu.copy_gmem_to_smem(x_ref, smem, bar.at[0])
    plgpu.barrier_wait(bar.at[0])
    o_ref[...] = %s

  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((128,), jnp.int32),
      scratch_types=[plgpu.SMEM((128,), jnp.int32), plgpu.Barrier(num_barriers=1)])
  return kernel, [jnp.arange(128, dtype=jnp.int32)]
'''


def output_array(out, shape, k=0):
  o = out["outputs"][k]
  return np.frombuffer(bytes.fromhex(o["hex"]), np.float32).reshape(shape)


def executor(mode):
  os.environ["JAX_PLATFORMS"] = "cpu"
  import cfjax_execute  # pylint: disable=import-outside-toplevel
  return cfjax_execute.Executor(mode)


def run_each_mode(test, case, modes, check_completed):
  """Runs `case` on each of `modes` (interpret mode under Lane; jax-lower and jax-ir under Lane
  and Warpgroup, with the compiler profile), each in a subTest: jax-lower must lower ("unavailable",
  never a pass), the others complete and are handed to check_completed(case_as_run, outcome)."""
  for mode in modes:
    for sem in ("lane", "warpgroup") if mode != "interpret" else ("lane",):
      c = json.loads(json.dumps(case))
      c["target"]["semantics"] = sem
      if mode != "interpret":
        c["target"]["profile"] = "mosaic"
      out = executor(mode).run(c)
      with test.subTest(mode=mode, semantics=sem):
        if mode == "lower":
          test.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
          test.assertIn("lowered for CUDA without an error", out["reason"])
          continue
        test.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
        check_completed(c, out)


def check_runs_to(test, case, want, modes):
  """run_each_mode on `case`, each completed run's first output equal to `want` (in a subTest
  named by the case's dtype)."""
  with test.subTest(dtype=case["outputs"][0]["dtype"]):
    run_each_mode(test, case, modes, lambda c, out: np.testing.assert_array_equal(
        typed_output(out, c["outputs"][0]), want))


def typed_output(out, spec, k=0):
  """Output k of an outcome as a numpy array of its spec's dtype and shape."""
  import cfjax_fill  # pylint: disable=import-outside-toplevel
  a = np.frombuffer(bytes.fromhex(out["outputs"][k]["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def round_trip_difference(case):
  """The first difference between `case` and what `collfuzz import` makes of its interpret-mode
  repro script, both in tools/import_roundtrip.py's canonical form with the inputs' fills
  dropped (a values fill's 1.0 comes back as 1: the tool's, not the case's); None when none."""
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  sys.path.insert(0, os.path.join(root, "tools"))
  import cfjax_repro  # pylint: disable=import-outside-toplevel
  import import_roundtrip  # pylint: disable=import-outside-toplevel
  src = cfjax_repro.generate({"case": case, "mode": "interpret",
                              "expected": {"kind": "completed", "outputs": []}})
  a, b = import_roundtrip.canonical(case), import_roundtrip.canonical(import_source(src))
  for arr in a["inputs"] + b["inputs"]:
    arr.pop("fill", None)
  return import_roundtrip.first_difference(a, b)


def import_file(path):
  import cfjax_import  # pylint: disable=import-outside-toplevel
  _, case = cfjax_import.import_kernel(path, "", "sm_90a", "interpret", "")
  return case


def import_source(src: str):
  """The case `collfuzz import` makes of a kernel file's text (written to a temporary k.py)."""
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "k.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(src)
    return import_file(path)


def run_script(src: str, timeout: int = 300) -> subprocess.CompletedProcess:
  """Runs a `collfuzz repro` script (its text) with this Python on JAX's CPU backend."""
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(src)
    return subprocess.run([sys.executable, path], capture_output=True, text=True,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=timeout, check=False)


def loops(ops):
  for op in ops:
    if op["op"] == "loop":
      yield op
    yield from loops(op.get("body", []))


def store_lines(case):
  """The vector-store lines (`ref[...] = value  # path`) of `case`'s interpret-mode repro
  script, stripped."""
  import cfjax_repro  # pylint: disable=import-outside-toplevel
  src = cfjax_repro.generate({
      "case": case, "mode": "interpret",
      "expected": {"kind": "completed", "outputs": []}, "match": "exact",
      "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})
  return [ln.strip() for ln in src.splitlines() if "[...] =" in ln]


def check_rejected(test, case, stages, exception, message):
  """`case` under each (semantics, stage) of `stages`, on jax-lower and jax-ir (each a subTest):
  rejected at that stage with `exception` and `message`."""
  for sem, stage in stages:
    c = json.loads(json.dumps(case))
    c["target"]["semantics"] = sem
    for mode in ("lower", "ir"):
      out = executor(mode).run(c)
      with test.subTest(mode=mode, semantics=sem):
        test.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
        d = out["diagnostic"]
        test.assertEqual((d["stage"], d["exception"], d["message"]), (stage, exception, message))
