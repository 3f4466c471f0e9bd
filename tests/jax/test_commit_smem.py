"""Vector stores into SMEM and commit_smem through the Python side (docs/case-format.md
"vector_store"): `buf.at[i][...] = value` ({"op": "vector_store", "dst": {"alloc", "index"}}),
`plgpu.commit_smem()` as an op of its own ({"op": "commit_smem"}) and a TMA store without its own
(`"commit_smem": false`): the case helpers (cfjax_case.written_ranges), the translation run in
interpret mode (jax-interpret), lowered (jax-lower: the module's fence.proxy.async) and evaluated
on the CPU (jax-ir), under Lane and Warpgroup semantics; what the compiler refuses (64 elements);
the repro script (cfjax_repro_body); `collfuzz import` (cfjax_import_vectors, cfjax_import_copies)
and the round trip.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_commit_smem.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_commit_smem.py'

Expected outputs are computed here with numpy from the inputs' fills, never copied from a run.
Neither interpret mode nor jax-ir models the generic and async proxies: without the fence they
still give the stored values (the reference marks that TMA store as racing).
"""

import json
import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import executor, import_source, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402

FENCE = "nvvm.fence.proxy <async.shared>"  # plgpu.commit_smem() in the lowered module


def tile_case(commit=True, explicit=False, dtype="int32", shape=(128,), lead=None,
              semantics="lane", profile="interpret"):
  """x -> SMEM tile `buf` by TMA, barrier wait, `buf[...] = buf[...] + 1` (`buf.at[lead]` with a
  leading index), then `{"op": "commit_smem"}` when `explicit`, then a TMA store of buf to o
  (its own commit_smem unless `commit` is False)."""
  shape = list(shape)
  ref = {"alloc": "buf"}
  if lead is not None:
    ref["index"] = [lead]
  body = [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "buf"},
           "barrier": {"alloc": "bar", "index": 0}},
          {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
          {"op": "vector_store", "dst": dict(ref),
           "value": {"add": [{"load": dict(ref)}, {"const": 1}]}}]
  if explicit:
    body.append({"op": "commit_smem"})
  store = {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"}, "dst": {"output": "o"}}
  if not commit:
    store["commit_smem"] = False
  body.append(store)
  return {"format": 1, "name": "tile_plus_one", "mesh": {},
          "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
          "inputs": [{"name": "x", "shape": shape, "dtype": dtype}],
          "outputs": [{"name": "o", "shape": shape, "dtype": dtype}],
          "program": [{"op": "run_scoped", "allocs": [
              {"name": "buf", "kind": "smem", "shape": shape, "dtype": dtype},
              {"name": "bar", "kind": "barrier", "num_barriers": 1}], "body": body}]}


def expected(case, lead=None):
  spec = case["inputs"][0]
  x = np.asarray(cfjax_fill.fill_array(spec)).astype(cfjax_fill.numpy_dtype(spec["dtype"]))
  x = x.reshape(spec["shape"]).copy()
  if lead is None:
    return x + 1
  x[lead] += 1
  return x


def out_array(out, spec):
  o = out["outputs"][0]
  a = np.frombuffer(bytes.fromhex(o["hex"]), cfjax_fill.numpy_dtype(spec["dtype"]))
  return a.reshape(spec["shape"])


def lowered_module(case) -> str:
  """The Mosaic GPU module text the case lowers to (as jax-ir reads it)."""
  import cfjax_ir_extract  # pylint: disable=import-outside-toplevel
  ex = executor("ir")
  rec = cfjax_ir_extract.Extracted()
  with cfjax_ir_extract.recording(rec):
    _, traced, _ = ex._trace(cfjax_case.Case.from_json(case), None)  # pylint: disable=protected-access
    traced.lower(lowering_platforms=("cuda",))
  return rec.module_text


class CaseTest(unittest.TestCase):

  def test_a_vector_store_into_smem_writes_no_output(self):
    c = cfjax_case.Case.from_json(tile_case())
    self.assertEqual(cfjax_case.written_ranges(c), {"o": [[0, 128]]})
    j = tile_case()
    del j["program"][0]["body"][-1]  # the TMA store: only the SMEM vector store is left
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(j)), {"o": []})


class RunTest(unittest.TestCase):
  """interpret mode and jax-ir give input + 1, with the store's commit_smem, without it and with an
  explicit commit_smem op; jax-lower lowers each, its module holding one fence or none."""

  def check(self, case, lead=None, fences=1):
    want = expected(case, lead)
    for mode, sems in (("interpret", ("lane",)), ("lower", ("lane", "warpgroup")),
                       ("ir", ("lane", "warpgroup"))):
      for sem in sems:
        with self.subTest(mode=mode, semantics=sem):
          c = json.loads(json.dumps(case))
          c["target"]["semantics"] = sem
          if mode != "interpret":
            c["target"]["profile"] = "mosaic"
          out = executor(mode).run(c)
          if mode == "lower":
            self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
            self.assertIn("lowered for CUDA without an error", out["reason"])
            self.assertEqual(lowered_module(c).count(FENCE), fences)
            continue
          self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
          self.assertEqual(out["outputs"][0]["written"], [[0, want.size]])
          np.testing.assert_array_equal(out_array(out, c["outputs"][0]), want)

  def test_tile_plus_one_then_commit_and_store(self):
    self.check(tile_case())

  def test_without_the_stores_commit_smem(self):
    self.check(tile_case(commit=False), fences=0)

  def test_an_explicit_commit_smem(self):
    self.check(tile_case(commit=False, explicit=True))

  def test_f32_and_f16_tiles(self):
    self.check(tile_case(dtype="float32", shape=(2, 128)))
    self.check(tile_case(dtype="float16", shape=(256,), commit=False), fences=0)

  def test_a_leading_index(self):
    self.check(tile_case(dtype="float32", shape=(2, 128), lead=1), lead=1)


class LoweringErrorTest(unittest.TestCase):
  """A 64-element SMEM vector store (both releases alike): the SMEM memref in Lane's message; a
  layout-inference failure under Warpgroup where the value loads, the splat error for a constant
  (the reference's lower.vector.strided_elements, dialect.vector.layout_inference and
  dialect.vector.splat_store_count)."""

  def diag(self, case, semantics):
    case["target"].update(semantics=semantics, profile="mosaic")
    out = executor("lower").run(case)
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    d = out["diagnostic"]
    return d["stage"], d["exception"], d["message"]

  def test_64_elements(self):
    lane = ("lower", "ValueError", "memref<64xi32, #gpu.address_space<workgroup>> must have a "
            "number of elements that is a multiple of 128 (got 64)")
    c = tile_case(shape=(64,))
    self.assertEqual(self.diag(c, "lane"), lane)
    # Mosaic GPU's layout inference (after the Pallas rules, before the dialect lowering) is
    # classified with the dialect's passes (cfjax_stage; rule dialect.vector.layout_inference).
    self.assertEqual(self.diag(c, "warpgroup"), (
        "dialect", "ValueError", "Failed to infer a possible set of layouts. This should only "
        "happen if user-provided layout casts are unsatisfiable. To dump the constraint system "
        "for debugging, use `MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`."))
    c = tile_case(shape=(64,))
    c["program"][0]["body"][2]["value"] = {"const": 1}
    self.assertEqual(self.diag(c, "lane"), lane)
    self.assertEqual(self.diag(c, "warpgroup"), (
        "dialect", "NotImplementedError", "Arrays with the splat layout can only be stored when "
        "they have a single element or a multiple of 128 elements"))
    out = executor("interpret").run(tile_case(shape=(64,)))
    self.assertEqual(out["kind"], "completed", out)  # interpret mode has no such limit


def generate(case, expected_outcome=None):
  return cfjax_repro.generate({
      "case": case, "mode": "interpret",
      "expected": expected_outcome or {"kind": "completed", "outputs": []}, "match": "exact",
      "collfuzz": "collfuzz test", "jax": "0.11.2", "command": "collfuzz repro t.json"})


class ReproTest(unittest.TestCase):

  def lines(self, case):
    body = generate(case).split("def scope0", 1)[1].split("pl.run_scoped(scope0", 1)[0]
    return [ln.strip() for ln in body.splitlines()[1:] if ln.strip()][2:]

  def test_the_lines(self):
    p = "$.program[0].body"
    self.assertEqual(self.lines(tile_case()), [
        f"buf[...] = buf[...] + jnp.full((128,), 1, jnp.int32)  # {p}[2]",
        f"plgpu.commit_smem()  # {p}[3]", "plgpu.copy_smem_to_gmem(buf, o)",
        "plgpu.wait_smem_to_gmem(0)"])
    self.assertEqual(self.lines(tile_case(commit=False, explicit=True))[1:], [
        f"plgpu.commit_smem()  # {p}[3]", f"plgpu.copy_smem_to_gmem(buf, o)  # {p}[4]",
        "plgpu.wait_smem_to_gmem(0)"])
    self.assertEqual(self.lines(tile_case(dtype="float32", shape=(2, 128), lead=1))[0],
                     f"buf.at[1,][...] = buf.at[1,][...] + jnp.full((128,), 1.0, jnp.float32)  "
                     f"# {p}[2]")

  def test_script_runs_and_asserts_the_outputs(self):
    c = tile_case(commit=False, explicit=True)
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = generate(c, out)
    run = run_script(src)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("1 output(s) hold the predicted values", run.stdout)


class ImportTest(unittest.TestCase):

  KERNEL = textwrap.dedent('''
      import jax
      import jax.numpy as jnp
      from jax import lax
      from jax.experimental import pallas as pl
      from jax.experimental.pallas import mosaic_gpu as plgpu

      def collfuzz_case():
        def body(x_ref, o_ref, smem, bar):
          plgpu.copy_gmem_to_smem(x_ref, smem.at[0], bar.at[0])
          plgpu.barrier_wait(bar.at[0])
          smem.at[1][...] = smem.at[0][...] + 1
      %s

        kernel = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((256,), jnp.float32), cluster=(2,),
            cluster_names=("x",),
            scratch_types=[plgpu.SMEM((2, 128), jnp.float32), plgpu.Barrier(num_barriers=1)])
        return kernel, [jnp.arange(128, dtype=jnp.float32)]
      ''')

  OUT = "o_ref.at[pl.ds(lax.axis_index('x') * 128, 128)]"

  def ops(self, *lines):
    src = self.KERNEL % "\n".join("    " + ln for ln in lines)
    case = import_source(src)
    (scope,) = case["program"]
    self.assertEqual(scope["body"][2], {
        "op": "vector_store", "dst": {"alloc": "smem", "index": [1]},
        "value": {"add": [{"load": {"alloc": "smem", "index": [0]}}, {"const": 1}]}})
    return scope["body"][3:]

  def store(self, **fields):
    op = {"op": "copy_smem_to_gmem", "src": {"alloc": "smem", "index": [1]},
          "dst": {"output": "out0", "index": [{"start": {"axis": "x", "mul": 128}, "size": 128}]}}
    op.update(fields)
    return op

  def test_a_commit_right_before_a_store_is_the_stores(self):
    # the store's index arithmetic (lax.axis_index('x') * 128) is traced between the two
    self.assertEqual(self.ops("plgpu.commit_smem()", "plgpu.commit_smem()",
                              f"plgpu.copy_smem_to_gmem(smem.at[1], {self.OUT})",
                              "plgpu.wait_smem_to_gmem(0)"), [self.store()])

  def test_a_store_without_a_commit(self):
    self.assertEqual(self.ops(f"plgpu.copy_smem_to_gmem(smem.at[1], {self.OUT})",
                              "plgpu.wait_smem_to_gmem(0)"), [self.store(commit_smem=False)])

  def test_any_other_commit_is_an_op(self):
    self.assertEqual(self.ops("plgpu.commit_smem()", "plgpu.barrier_wait(bar.at[0])",
                              f"plgpu.copy_smem_to_gmem(smem.at[1], {self.OUT})",
                              "plgpu.commit_smem()", "plgpu.wait_smem_to_gmem(0)",
                              "plgpu.commit_smem()"),
                     [{"op": "commit_smem"}, {"op": "barrier_wait",
                                              "barrier": {"alloc": "bar", "index": 0}},
                      self.store(commit_smem=False, wait=False), {"op": "commit_smem"},
                      {"op": "wait_smem_to_gmem", "n": 0}, {"op": "commit_smem"}])

  def test_a_store_into_smem_of_an_axis_index_is_refused(self):
    with self.assertRaises(Exception) as cm:
      self.ops("smem.at[lax.axis_index('x')][...] = smem.at[0][...]")
    self.assertIn("indexed with lax.axis_index", str(cm.exception))

  def test_round_trip(self):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel
    for c in (tile_case(), tile_case(commit=False), tile_case(commit=False, explicit=True),
              tile_case(explicit=True), tile_case(dtype="float32", shape=(2, 128), lead=1)):
      with self.subTest(case=json.dumps(c["program"][0]["body"][2:])):
        src = cfjax_repro.generate({"case": c, "mode": "interpret",
                                    "expected": {"kind": "completed", "outputs": []}})
        got = import_source(src)
        self.assertIsNone(import_roundtrip.first_difference(import_roundtrip.canonical(c),
                                                            import_roundtrip.canonical(got)))


if __name__ == "__main__":
  unittest.main()
