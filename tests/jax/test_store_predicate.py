"""copy_smem_to_gmem's `predicate` (plgpu.copy_smem_to_gmem(src, dst, predicate=...), a store
issued only where the condition holds) through the Python side: the written ranges
(cfjax_case), the translation and interpret mode's refusal at run time, the repro script
(cfjax_repro_body), `collfuzz import` (cfjax_import_copies), tools/import_roundtrip.py and jax-ir's
predicated bulk store (cfjax_ir_ops_ptx), under Lane and Warpgroup semantics.

    .venv-jax/bin/python -m unittest tests/jax/test_store_predicate.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_store_predicate.py

Calls the modules directly (no build/release/collfuzz).
"""

import copy
import json
import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_source, output_array, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_repro  # noqa: E402

STORE = "$.program[0].body[2]"
X = np.arange(1, 257, dtype=np.float32).reshape(2, 128)  # x's default iota fill (1, 2, ...)


def store_case(predicate=None, profile="mosaic", semantics="lane"):
  """A 2-CTA cluster (axis x): each CTA copies x[x_idx] into SMEM, then stores it to y[x_idx]
  (`predicate` on the store, omitted when None)."""
  store = {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"},
           "dst": {"output": "y", "index": [{"axis": "x"}]}}
  if predicate is not None:
    store["predicate"] = predicate
  return {
      "format": 1, "name": "store_predicate",
      "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [2, 128], "dtype": "float32"}],
      "outputs": [{"name": "y", "shape": [2, 128], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "buf", "kind": "smem", "shape": [128], "dtype": "float32"},
          {"name": "bar", "kind": "barrier"}], "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"axis": "x"}]},
               "dst": {"alloc": "buf"}, "barrier": {"alloc": "bar"}},
              {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
              store]}],
  }


def written(c):
  return cfjax_case.written_ranges(cfjax_case.Case.from_json(c))


class WrittenRangesTest(unittest.TestCase):

  def test_only_ctas_where_the_predicate_holds_write(self):
    self.assertEqual(written(store_case()), {"y": [[0, 256]]})
    self.assertEqual(written(store_case({"axis": "x", "eq": 0})), {"y": [[0, 128]]})
    self.assertEqual(written(store_case({"not": {"axis": "x", "eq": 0}})), {"y": [[128, 256]]})
    self.assertEqual(written(store_case({"any": [{"axis": "x", "eq": 0},
                                                 {"axis": "x", "eq": 1}]})), {"y": [[0, 256]]})
    self.assertEqual(written(store_case(True)), {"y": [[0, 256]]})
    self.assertEqual(written(store_case(False)), {"y": []})

  def test_null_is_no_predicate(self):
    c = store_case()
    c["program"][0]["body"][2]["predicate"] = None
    self.assertEqual(written(c), {"y": [[0, 256]]})


class InterpretTest(unittest.TestCase):

  def test_interpret_mode_refuses_it_at_run(self):
    """gpu_callbacks.copy_smem_to_gmem raises NotImplementedError inside the callback; the
    executor reports the inner exception (rule interpret.store.predicate)."""
    for pred in ({"axis": "x", "eq": 0}, True):
      out = executor("interpret").run(store_case(pred, profile="interpret"))
      self.assertEqual(out["kind"], "rejected", out)
      d = out["diagnostic"]
      self.assertEqual((d["stage"], d["exception"], d["message"]),
                       ("run", "NotImplementedError", "predicate not supported"), d)
      self.assertEqual(d.get("op"), STORE)

  def test_without_a_predicate_it_completes(self):
    out = executor("interpret").run(store_case(profile="interpret"))
    self.assertEqual(out["kind"], "completed", out)


class ReproTest(unittest.TestCase):

  def test_script_writes_the_keyword_and_asserts_the_refusal(self):
    exp = {"kind": "rejected", "diagnostic": {
        "stage": "run", "exception": "NotImplementedError",
        "message": "predicate not supported", "rule": "interpret.store.predicate"}}
    req = {"case": store_case({"axis": "x", "eq": 0}, profile="interpret"), "mode": "interpret",
           "expected": exp, "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
           "command": "collfuzz repro t.json"}
    src = cfjax_repro.generate(req)
    compile(src, "t.py", "exec")
    self.assertIn("plgpu.copy_smem_to_gmem(buf, y.at[lax.axis_index('x'),], "
                  "predicate=lax.axis_index('x') == 0)\n", src)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])


class ImportTest(unittest.TestCase):

  def import_src(self, src):
    return import_source(src)

  def test_import_reads_the_predicate(self):
    kernel = textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax import lax
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def collfuzz_case():
          def body(x_ref, y_ref, smem, bar):
            plgpu.copy_gmem_to_smem(x_ref.at[lax.axis_index("x")], smem, bar.at[0])
            plgpu.barrier_wait(bar.at[0])
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(smem, y_ref.at[lax.axis_index("x")],
                                    predicate=lax.axis_index("x") == 0)
            plgpu.copy_smem_to_gmem(smem, y_ref.at[lax.axis_index("x")], reduction_op="add",
                                    predicate=True)
            plgpu.copy_smem_to_gmem(smem, y_ref.at[lax.axis_index("x")])
            plgpu.wait_smem_to_gmem(0)
          kernel = plgpu.kernel(
              body, out_type=jax.ShapeDtypeStruct((2, 128), jnp.float32),
              cluster=(2,), cluster_names=("x",),
              scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier(num_barriers=1)])
          return kernel, [jnp.arange(256, dtype=jnp.float32).reshape(2, 128)]
        ''')
    c = self.import_src(kernel)
    stores = [op for op in json.loads(json.dumps(c["program"]))[0]["body"]
              if op["op"] == "copy_smem_to_gmem"]
    self.assertEqual(len(stores), 3, c["program"])
    self.assertEqual(stores[0]["predicate"], {"axis": "x", "eq": 0})
    self.assertEqual(stores[0]["dst"]["index"], [{"axis": "x"}])
    self.assertNotIn("reduction_op", stores[0])
    self.assertEqual((stores[1]["predicate"], stores[1]["reduction_op"]), (True, "add"))
    self.assertNotIn("predicate", stores[2])

  def test_round_trip(self):
    """case -> repro script -> import gives the case back, the store's predicate included (in
    tools/import_roundtrip.py's canonical form, which carries it)."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    pred = {"all": [{"axis": "x", "eq": 0}, {"not": {"axis": "x", "eq": 1}}]}
    c = store_case(pred, profile="interpret")
    src = cfjax_repro.generate({"case": c, "mode": "interpret", "expected": {"kind": "completed",
                                                                             "outputs": []}})
    got = self.import_src(src)
    self.assertIsNone(import_roundtrip.first_difference(import_roundtrip.canonical(c),
                                                        import_roundtrip.canonical(got)))
    other = copy.deepcopy(c)
    del other["program"][0]["body"][2]["predicate"]
    self.assertIsNotNone(import_roundtrip.first_difference(import_roundtrip.canonical(other),
                                                           import_roundtrip.canonical(got)))


class IrTest(unittest.TestCase):
  """jax-ir runs the lowered bulk store's `@$0` predicate: only CTA 0 writes its row."""

  def run_ir(self, pred, semantics):
    out = executor("ir").run(store_case(pred, semantics=semantics))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    return out

  def test_cta0_only_writes_row_0(self):
    x = X
    for semantics in ("lane", "warpgroup"):
      with self.subTest(semantics=semantics):
        out = self.run_ir({"axis": "x", "eq": 0}, semantics)
        self.assertEqual(out["outputs"][0]["written"], [[0, 128]])
        y = output_array(out, (2, 128))
        np.testing.assert_array_equal(y[0], x[0])
        np.testing.assert_array_equal(y[1], np.zeros(128, np.float32))  # jax-ir's zeroed buffer

  def test_cta1_only_and_always(self):
    x = X
    for semantics in ("lane", "warpgroup"):
      with self.subTest(semantics=semantics):
        out = self.run_ir({"axis": "x", "ne": 0}, semantics)
        self.assertEqual(out["outputs"][0]["written"], [[128, 256]])
        y = output_array(out, (2, 128))
        np.testing.assert_array_equal(y[1], x[1])
        np.testing.assert_array_equal(y[0], np.zeros(128, np.float32))
        out = self.run_ir(True, semantics)
        self.assertEqual(out["outputs"][0]["written"], [[0, 256]])
        np.testing.assert_array_equal(output_array(out, (2, 128)), x)


if __name__ == "__main__":
  unittest.main()
