"""Tests of the script generator of `collfuzz repro` (harness/jax/cfjax_repro.py), without JAX runs.

    .venv-jax/bin/python -m unittest discover -s tests/jax

The end-to-end check (every corpus script against jax-interpret's verdict) is tools/repro_check.py.
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import cfjax_repro  # noqa: E402


def case(program, **mesh):
  return {
      "format": 1, "name": "t", "target": {"arch": "sm_90a"},
      "mesh": {"cluster": [2], "cluster_names": ["x"], **mesh},
      "inputs": [{"name": "src", "shape": [128], "dtype": "float32"}],
      "outputs": [{"name": "out", "shape": [4], "dtype": "int32"}],
      "program": program,
  }


COPY = [{"op": "run_scoped", "allocs": [
    {"name": "dst", "kind": "smem", "shape": [128], "dtype": "float32"},
    {"name": "bar", "kind": "barrier"}], "body": [
    {"op": "copy_gmem_to_smem", "src": {"input": "src"}, "dst": {"alloc": "dst"},
     "barrier": {"alloc": "bar", "index": 0}, "collective_axes": ["x"]},
    {"op": "when", "cond": {"axis": "x", "eq": 0}, "body": [
        {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}]}]}]


def request(program, expected, mode="interpret"):
  return {"case": case(program), "mode": mode, "expected": expected, "match": "exact",
          "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"}


class GeneratorTest(unittest.TestCase):

  def test_rejected_script_compiles_and_names_the_exception(self):
    exp = {"kind": "rejected", "diagnostic": {"stage": "interpret", "exception": "ValueError",
                                              "message": "Collective axis `x` not found",
                                              "rule": "interpret.scoped.axis_not_found"}}
    src = cfjax_repro.generate(request(COPY, exp))
    compile(src, "t.py", "exec")
    self.assertIn("EXPECTED_EXCEPTION = 'ValueError'", src)
    self.assertIn("EXPECTED_STEP = 'interpret'", src)
    self.assertIn("collective_axes=('x',)", src)
    self.assertIn("@pl.when(lax.axis_index('x') == 0)", src)
    self.assertIn("Targets JAX 0.11.2", src)

  def test_completed_script_asserts_written_values_and_skips_the_sentinel(self):
    # out = [7, <sentinel>, 9, 10]; elements [0, 3) written
    data = bytes.fromhex("07000000" "a5a5a5a5" "09000000" "0a000000")
    exp = {"kind": "completed", "outputs": [{"name": "out", "hex": data.hex(), "written": [[0, 3]]}]}
    src = cfjax_repro.generate(request(COPY, exp))
    compile(src, "t.py", "exec")
    self.assertIn("out_want = np.array([7, 9]).astype(jnp.int32)", src)
    self.assertIn("check_array('output out', results[0], out_want, at=np.r_[0:1, 2:3])", src)
    self.assertIn("1 written element(s) hold SMEM that no copy wrote", src)
    self.assertNotIn("fromhex", src)

  def test_expected_arrays_are_runs_never_hex(self):
    # 300 elements: an arange, a constant run, a tiled pattern, then literals
    vals = list(range(1, 101)) + [0] * 100 + [3, 9, 1] * 30 + [5, 2, 8, 6, 4, 7, 1, 9, 0, 3]
    data = b"".join(int(v).to_bytes(4, "little", signed=True) for v in vals)
    c = case(COPY)
    c["outputs"] = [{"name": "out", "shape": [3, 100], "dtype": "int32"}]
    exp = {"kind": "completed", "outputs": [{"name": "out", "hex": data.hex(), "written": [[0, 300]]}]}
    src = cfjax_repro.generate({"case": c, "mode": "interpret", "expected": exp})
    self.assertNotIn("fromhex", src)
    self.assertIn("np.arange(1, 101),", src)
    self.assertIn("np.full(100, 0),", src)
    self.assertIn("np.tile(np.array([3, 9, 1]), 30),", src)
    self.assertIn("np.array([5, 2, 8, 6, 4, 7, 1, 9, 0, 3]),", src)
    self.assertIn("]).astype(jnp.int32).reshape((3, 100))", src)
    self.assertEqual(cfjax_repro.runs([1, 2, 3, 4, 7, 5, 5, 5, 5]),
                     [("arange", 1, 5, 1), ("list", [7]), ("full", 4, 5)])

  def test_check_array_names_the_first_differing_index(self):
    import numpy as np  # pylint: disable=import-outside-toplevel
    ns = {"np": np, "jnp": np}
    exec(cfjax_repro.CHECK_ARRAY, ns)  # pylint: disable=exec-used
    got = np.arange(12, dtype=np.int32).reshape(3, 4)
    ns["check_array"]("out", got, np.arange(12).astype(np.int32).reshape(3, 4))
    want = np.arange(12).astype(np.int32)
    want[6] = 60
    want[9] = 90
    with self.assertRaisesRegex(AssertionError, r"out\[1, 2\]: expected 60, got 6 \(2 of 12 compared"):
      ns["check_array"]("out", got, want.reshape(3, 4))
    # `at`: only those flat indices are compared
    ns["check_array"]("out", got, np.array([0, 1, 8]).astype(np.int32), at=np.r_[0:2, 8:9])
    with self.assertRaisesRegex(AssertionError, r"out\[2, 0\]: expected 7, got 8 \(1 of 3"):
      ns["check_array"]("out", got, np.array([0, 1, 7]).astype(np.int32), at=np.r_[0:2, 8:9])

  def test_lower_mode_patches_the_arch_and_keeps_the_call_alive(self):
    c = case(COPY)
    c["outputs"] = []
    req = {"case": c, "mode": "lower", "expected": {"kind": "completed"}}
    src = cfjax_repro.generate(req)
    compile(src, "t.py", "exec")
    self.assertIn("mgpu_utils._infer_arch = lambda: (9, 0)", src)
    self.assertIn("mgpu_core._SMEM_SIZE_BOUND = 232448", src)
    c["target"]["arch"] = "sm_80"
    src = cfjax_repro.generate({"case": c, "mode": "lower", "expected": {"kind": "completed"}})
    self.assertIn("mgpu_utils._infer_arch = lambda: (8, 0)", src)
    self.assertIn("mgpu_core._SMEM_SIZE_BOUND = 166912", src)  # an A100's shared_memory_per_block_optin
    self.assertIn("lowering_platforms=('cuda',)", src)
    self.assertIn("jax.ShapeDtypeStruct((1,), jnp.float32)", src)

  def test_unknown_op_is_refused_with_its_path(self):
    prog = [{"op": "run_scoped", "allocs": [], "body": [{"op": "emit_pipeline", "count": 2}]}]
    with self.assertRaisesRegex(cfjax_repro.Unsupported, r"\$\.program\[0\]\.body\[0\]: op 'emit_pipeline'"):
      cfjax_repro.generate(request(prog, {"kind": "completed", "outputs": []}))

  def test_names_that_are_not_identifiers(self):
    self.assertEqual(cfjax_repro.ident("dst"), "dst")
    self.assertNotEqual(cfjax_repro.ident("jax"), "jax")
    self.assertTrue(cfjax_repro.ident("a-b").isidentifier())
    self.assertTrue(cfjax_repro.ident("class").isidentifier())

  def test_raised_unwraps_a_callback_error(self):
    ns = {}
    exec(cfjax_repro._RAISED, {"re": __import__("re")}, ns)  # pylint: disable=exec-used,protected-access

    class JaxRuntimeError(RuntimeError):
      pass

    e = JaxRuntimeError("INTERNAL: CpuCallback error\nTraceback (most recent call last):\n"
                        "RuntimeError: Computation failed on Warpgroup(...) with exception:\n"
                        "  File \"x.py\", line 1\n    assert a == b\nAssertionError\n")
    self.assertEqual(ns["raised"](e), ("AssertionError", ""))
    e = JaxRuntimeError("INTERNAL: ...\nValueError: Barrier deallocated with 1 arrivals pending.\n")
    self.assertEqual(ns["raised"](e), ("ValueError", "Barrier deallocated with 1 arrivals pending."))

  def test_raised_stops_at_the_exception_jax_annotates_with_its_stack_trace(self):
    # A lowering rule's RuntimeError whose cause is JAX's JaxStackTraceBeforeTransformation (the
    # user's source line) is the original, not a wrapper (the bare iota under Lane).
    ns = {}
    exec(cfjax_repro._RAISED, {"re": __import__("re")}, ns)  # pylint: disable=exec-used,protected-access

    class JaxStackTraceBeforeTransformation(Exception):
      pass

    e = RuntimeError("Failed to infer the output layout of the iota.")
    e.__cause__ = JaxStackTraceBeforeTransformation("the source line")
    self.assertEqual(ns["raised"](e), ("RuntimeError", "Failed to infer the output layout of the iota."))

  def test_a_rejected_script_accepts_the_predictions_alternatives(self):
    # The layout search's running out of fuel (docs/rules.md): the script accepts either message,
    # at the expected step, and nothing else.
    fuel = ("Layout inference failed to find a solution. Consider adding layout annotations to "
            "your program to guide the search.")
    exp = {"kind": "rejected", "diagnostic": {
        "stage": "dialect", "exception": "ValueError", "rule": "dialect.vector.layout_inference",
        "message": "Failed to infer a possible set of layouts.",
        "alternatives": [{"exception": "ValueError", "message": fuel}]}}
    src = cfjax_repro.generate(request(COPY, exp, mode="lower"))
    self.assertIn("ALTERNATIVES = [('ValueError', " + repr(fuel) + ")]", src)
    start = src.index("EXPECTED_EXCEPTION = ")
    ns = {}
    exec(cfjax_repro._RAISED, {"re": __import__("re")}, ns)  # pylint: disable=exec-used,protected-access
    exec(src[start:src.index("\n\n\n", src.index("def check_raised"))], ns)  # pylint: disable=exec-used
    ns["check_raised"](ValueError(fuel), "lower")
    ns["check_raised"](ValueError("Failed to infer a possible set of layouts."), "lower")
    with self.assertRaises(AssertionError):
      ns["check_raised"](ValueError("another message"), "lower")
    with self.assertRaises(AssertionError):
      ns["check_raised"](ValueError(fuel), "trace")

  def test_protocol_answers_errors_as_json(self):
    lines = [json.dumps(request([{"op": "nope"}], {"kind": "completed", "outputs": []})),
             json.dumps(request(COPY, {"kind": "timeout"}))]
    out = subprocess.run([sys.executable, os.path.join(ROOT, "harness/jax/cfjax_repro.py")],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    self.assertEqual(len(answers), 2)
    self.assertIn("op 'nope'", answers[0]["error"])
    self.assertIn("'timeout'", answers[1]["error"])


if __name__ == "__main__":
  unittest.main()
