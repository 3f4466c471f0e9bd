"""DSMEM reads through `plgpu.cluster_ref` (a vector value's SMEM load with a "cluster" member,
docs/case-format.md "vector_store"; harness/jax/cfjax_cluster_ref.py) on the Python side: the
translation run in GPU interpret mode (jax-interpret: JAX's interpreter refuses the transform in
each CTA's thread, and the adapter reports the first CTA's error), the compiler's lowering
(jax-lower) and the lowered module evaluated on the CPU (jax-ir: nvvm.mapa or the inline
`mapa.shared::cluster.u32`, descriptors and vector.load in address space 7), under Lane and
Warpgroup semantics; the repro script (cfjax_repro_body); `collfuzz import` and the round trip.
DSMEM writes (a vector_store's SMEM dst with "cluster", `plgpu.cluster_ref(smem, {...})[...] =
value`): WriteTest, the same steps (Lane only: Warpgroup refuses the cluster memory space).

    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax/bin/python -m unittest tests/jax/test_cluster_ref.py
    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_cluster_ref.py

Expected outputs are computed here with numpy from the inputs' fills, never copied from a run.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from loop_case_support import (executor, import_source, round_trip_difference,  # noqa: E402
                               run_script, typed_output)

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402
from cfjax_cluster_ref import cluster_member  # noqa: E402

PEER = {"axis": "x", "mul": -1, "add": 1}  # 1 - lax.axis_index("x")


def peer_case(shape=(256,), dtype="float32", cluster=PEER, smem_rows=None, semantics="lane",
              profile="mosaic", name="dsmem_flip"):
  """Two CTAs along "x": CTA i copies row i of x into its SMEM (a row of `smem_rows` rows when
  given, the load indexing it), waits, meets the other CTA at a cluster barrier, then stores the
  SMEM of CTA `cluster`'s index (the other one by default) into out[i]."""
  rows = list(shape)
  smem_shape = [smem_rows] + rows if smem_rows else rows
  dst = {"alloc": "smem", "index": [smem_rows - 1]} if smem_rows else {"alloc": "smem"}
  load = {"alloc": "smem", "cluster": {"x": cluster}}
  if smem_rows:
    load["index"] = [smem_rows - 1]
  return {
      "format": 1, "name": name, "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [2] + rows, "dtype": dtype, "fill": {"pattern": "iota"}}],
      "outputs": [{"name": "out", "shape": [2] + rows, "dtype": dtype}],
      "program": [{
          "op": "run_scoped",
          "allocs": [{"name": "smem", "kind": "smem", "shape": smem_shape, "dtype": dtype},
                     {"name": "bar", "kind": "barrier", "num_arrivals": 1, "num_barriers": []},
                     {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"],
                      "num_arrivals": 1}],
          "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [{"axis": "x"}]},
               "dst": dst, "barrier": {"alloc": "bar"}},
              {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
              {"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "vector_store", "dst": {"output": "out", "index": [{"axis": "x"}]},
               "value": {"load": load}}]}]}


def grid_case(axis, semantics):
  """Four CTAs, cluster (2, 2) named ("a", "b"): CTA (a, b) copies row 2a + b of x, and stores the
  SMEM of the CTA whose `axis` coordinate is 1 - its own (the other coordinate its own) into
  out[2a + b]. CUDA's x is the last Pallas axis, "b": the evaluator's ranks must agree."""
  row = {"axis": "a", "mul": 2, "plus": [{"axis": "b"}]}
  return {
      "format": 1, "name": f"dsmem_grid_{axis}",
      "mesh": {"cluster": [2, 2], "cluster_names": ["a", "b"]},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": "mosaic"},
      "inputs": [{"name": "x", "shape": [4, 128], "dtype": "int32", "fill": {"pattern": "iota"}}],
      "outputs": [{"name": "out", "shape": [4, 128], "dtype": "int32"}],
      "program": [{
          "op": "run_scoped",
          "allocs": [{"name": "smem", "kind": "smem", "shape": [128], "dtype": "int32"},
                     {"name": "bar", "kind": "barrier", "num_arrivals": 1},
                     {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["a", "b"],
                      "num_arrivals": 1}],
          "body": [
              {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [row]},
               "dst": {"alloc": "smem"}, "barrier": {"alloc": "bar", "index": 0}},
              {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
              {"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "vector_store", "dst": {"output": "out", "index": [row]},
               "value": {"add": [
                   {"load": {"alloc": "smem",
                             "cluster": {axis: {"axis": axis, "mul": -1, "add": 1}}}},
                   {"const": 1000}]}}]}]}


def jax_version() -> str:
  from importlib import metadata  # pylint: disable=import-outside-toplevel
  return metadata.version("jax")


def input_of(case):
  return cfjax_fill.fill_array(case["inputs"][0])


def interpret_message(cta_index: int) -> str:
  """JAX's GPU interpreter's error for the load of a CTA that computed `cta_index`."""
  return ("Unsupported transform: ClusterRefTransform(dims=('x',), "
          f"idxs=(Array({cta_index}, dtype=int32),))")


class CaseHelpersTest(unittest.TestCase):

  def test_cluster_member(self):
    self.assertIsNone(cluster_member({"alloc": "s"}, "$"))
    self.assertEqual(cluster_member({"alloc": "s", "cluster": {"x": 1}}, "$"), ("x", 1))
    self.assertEqual(cluster_member({"alloc": "s", "cluster": {"x": PEER}}, "$"), ("x", PEER))
    for bad in ({"x": 1, "y": 0}, {}, {"x": True}, {"x": "1"}, {"x": {"mul": 2}}, [1]):
      with self.subTest(bad=bad), self.assertRaises(cfjax_case.CaseError) as cm:
        cluster_member({"alloc": "s", "cluster": bad}, "$.v.load")
      self.assertIn("$.v.load.cluster", str(cm.exception))
    with self.assertRaises(cfjax_case.CaseError):
      cluster_member({"input": "x", "cluster": {"x": 0}}, "$")


class InterpretTest(unittest.TestCase):
  """GPU interpret mode has no ClusterRefTransform: each CTA's `get` raises in its own thread,
  with the peer index that CTA computed; the adapter reports the first one to fail (the one
  whose set_failed JAX's shared memory recorded first), as any run-time error."""

  def test_interpret_mode_refuses_the_transform(self):
    case = peer_case(profile="interpret")
    out = executor("interpret").run(case)
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"], d.get("op")),
                     ("run", "ValueError", "$.program[0].body[4]"))
    # CTA 0 computes 1 - 0 = 1, CTA 1 computes 0: which thread fails first is up to the threads.
    self.assertIn(d["message"], (interpret_message(1), interpret_message(0)))

  def test_interpret_mode_static_peer(self):
    out = executor("interpret").run(peer_case(cluster=0, profile="interpret"))
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    self.assertEqual(out["diagnostic"]["message"], interpret_message(0))


class CompilerTest(unittest.TestCase):
  """jax-lower lowers the loads; jax-ir reads the peer's SMEM bytes."""

  def check_ir(self, case, want):
    for sem in ("lane", "warpgroup"):
      c = json.loads(json.dumps(case))
      c["target"]["semantics"] = sem
      with self.subTest(case=case["name"], semantics=sem):
        if sem == "warpgroup" and jax_version() == "0.11.2" and \
            c["program"][0]["body"][-1]["value"]["load"].get("index"):
          self.check_indexed_refused_0_11_2(c)
          continue
        low = executor("lower").run(c)
        self.assertEqual(low["kind"], "unavailable", json.dumps(low)[:2000])
        self.assertIn("lowered for CUDA without an error", low["reason"])
        out = executor("ir").run(c)
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(typed_output(out, c["outputs"][0]), want)
        self.assertEqual(out["outputs"][0]["written"], [[0, want.size]])

  def check_indexed_refused_0_11_2(self, case):
    """JAX 0.11.2, Warpgroup: `plgpu.cluster_ref(smem.at[k], ...)` (a strided ref, its offset
    dynamic) fails in the dialect lowering of its vector load: mgpu.dialect.get_cluster_ref's
    result type has no offset, the load's unwrap expects the operand's (fixed in 0.12.0.1). The
    message names SSA values (`%205`), which vary."""
    shape = case["outputs"][0]["shape"][1:]
    t = "x".join(map(str, shape)) + "x" + {"int32": "i32", "float32": "f32",
                                           "float16": "f16"}[case["outputs"][0]["dtype"]]
    strides = ", ".join(str(int(np.prod(shape[d + 1:]))) for d in range(len(shape)))
    for mode in ("lower", "ir"):
      out = executor(mode).run(case)
      self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
      d = out["diagnostic"]
      self.assertEqual((d["stage"], d["exception"]), ("dialect", "ValueError"))
      self.assertTrue(d["message"].startswith(
          f"Expected type memref<{t}, strided<[{strides}], offset: ?>, 7 : i32> for value "
          "OpResult(%"), d["message"])
      self.assertTrue(d["message"].endswith(f"to memref<{t}, strided<[{strides}]>, 7 : i32>)"),
                      d["message"])

  def test_each_cta_reads_the_other_ones_smem(self):
    for shape, dtype in (((256,), "float32"), ((256,), "float16"), ((2, 128), "int32")):
      case = peer_case(shape, dtype)
      self.check_ir(case, input_of(case)[::-1])

  def test_indexed_smem_and_a_static_peer(self):
    case = peer_case((128,), "int32", cluster=1, smem_rows=2)
    x = input_of(case)
    self.check_ir(case, np.stack([x[1], x[1]]))
    case = peer_case((128,), "int32", cluster={"axis": "x"}, smem_rows=2)  # its own SMEM
    self.check_ir(case, input_of(case))

  def test_cuda_x_is_the_last_pallas_axis(self):
    for axis in ("a", "b"):
      for sem in ("lane", "warpgroup"):
        case = grid_case(axis, sem)
        x = input_of(case)
        # CTA (a, b) reads row 2 (1 - a) + b ("a") or 2 a + 1 - b ("b").
        perm = [2 * (1 - a) + b if axis == "a" else 2 * a + 1 - b for a in (0, 1) for b in (0, 1)]
        out = executor("ir").run(case)
        with self.subTest(axis=axis, semantics=sem):
          self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
          np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x[perm] + 1000)

  def test_lane_refuses_64_elements(self):
    # FragmentedArray.load_strided of the shared::cluster memref (address space 7).
    case = peer_case((64,), "float32")
    for mode in ("lower", "ir"):
      out = executor(mode).run(case)
      with self.subTest(mode=mode):
        self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
        self.assertEqual(out["diagnostic"]["exception"], "ValueError")
        self.assertEqual(out["diagnostic"]["message"],
                         "memref<64xf32, 7 : i32> must have a number of elements that is a "
                         "multiple of 128 (got 64)")


class ReproTest(unittest.TestCase):

  def script(self, case, mode, expected, match=None):
    req = {"case": case, "mode": mode, "expected": expected}
    if match:
      req["match"] = match
    return cfjax_repro.generate(req)

  def test_the_load_is_written_readably(self):
    src = self.script(peer_case(), "lower", {"kind": "completed", "outputs": []})
    self.assertIn("= plgpu.cluster_ref(smem, {'x': 1 - lax.axis_index('x')})[...]", src)
    for cluster, text in ((1, "{'x': 1}"), ({"axis": "x"}, "{'x': lax.axis_index('x')}"),
                          ({"axis": "x", "mul": -1}, "{'x': -lax.axis_index('x')}"),
                          ({"axis": "x", "mul": 3, "add": 1, "mod": 2},
                           "{'x': (lax.axis_index('x') * 3 + 1) % 2}")):
      with self.subTest(cluster=cluster):
        src = self.script(peer_case((128,), "int32", cluster=cluster, smem_rows=2), "lower",
                          {"kind": "completed", "outputs": []})
        self.assertIn(f"plgpu.cluster_ref(smem.at[1,], {text})[...]", src)

  def test_scripts_run(self):
    r = run_script(self.script(peer_case(), "lower", {"kind": "completed", "outputs": []}))
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("as predicted: the kernel lowered for CUDA without an error", r.stdout)
    # Interpret mode: JAX's own error, whichever CTA raises it first.
    expected = {"kind": "rejected", "diagnostic": {
        "stage": "run", "exception": "ValueError",
        "message": "Unsupported transform: ClusterRefTransform(dims=('x',), idxs=(Array("}}
    r = run_script(self.script(peer_case(profile="interpret"), "interpret", expected, "contains"))
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("as predicted: ValueError at run: Unsupported transform", r.stdout)


KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(x_ref, o_ref, smem, bar, cbar):
    i = lax.axis_index("x")
    plgpu.copy_gmem_to_smem(x_ref.at[i], smem.at[1], bar)
    plgpu.barrier_wait(bar)
    plgpu.barrier_arrive(cbar.at[0])
    plgpu.barrier_wait(cbar.at[0])
    o_ref[i] = %s

  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((2, 128), jnp.int32),
      scratch_types=[plgpu.SMEM((2, 128), jnp.int32), plgpu.Barrier(),
                     plgpu.ClusterBarrier(collective_axes=("x",), num_barriers=1)],
      cluster=(2,), cluster_names=("x",)%s)
  return kernel, [jnp.arange(256, dtype=jnp.int32).reshape(2, 128)]
'''


class ImportTest(unittest.TestCase):

  def imported_value(self, expr, mesh_extra=""):
    case = import_source(KERNEL % (expr, mesh_extra))
    return case["program"][0]["body"][-1]["value"]

  def test_forms(self):
    def load(c):
      return {"load": {"alloc": "smem", "index": [1], "cluster": {"x": c}}}
    for expr, want in (
        ('plgpu.cluster_ref(smem.at[1], {"x": 1 - lax.axis_index("x")})[...]', load(PEER)),
        ('plgpu.cluster_ref(smem, {"x": lax.axis_index("x")}).at[1][...]',
         load({"axis": "x"})),
        ('plgpu.cluster_ref(smem.at[1], {"x": 0})[...] + 1',
         {"add": [load(0), {"const": 1}]}),
        ('plgpu.cluster_ref(smem.at[1], {"x": lax.axis_index("x") * -1 + 1})[...]', load(PEER))):
      with self.subTest(expr=expr):
        self.assertEqual(self.imported_value(expr), want)

  def test_refusals(self):
    from cfjax_import_values import ImportRefused  # pylint: disable=import-outside-toplevel
    for expr, why in (
        ('plgpu.cluster_ref(smem.at[1], {"x": 0, "y": 1})[...]', "over 2 cluster axes"),
        ('plgpu.cluster_ref(smem.at[1], {"x": lax.rem(lax.axis_index("x") + 1, 2)})[...]',
         "a case's peer CTA is an integer or lax.axis_index(axis) * m + a"),
        ('plgpu.cluster_ref(smem.at[1], {"x": lax.axis_index("y")})[...]',
         "the lax.axis_index of 'y', which is neither a cluster axis nor the thread axis"),
        ('plgpu.cluster_ref(x_ref.at[0], {"x": 0})[...]', "a peer CTA's SMEM allocation only")):
      mesh = ', grid=(1,), grid_names=("y",)' if 'axis_index("y")' in expr else ""
      with self.subTest(expr=expr):
        with self.assertRaises(ImportRefused) as cm:
          import_source(KERNEL % (expr, mesh))
        self.assertIn(why, str(cm.exception))

  def test_round_trip(self):
    for cluster in (PEER, 0, {"axis": "x"}):
      case = peer_case((128,), "int32", cluster=cluster, smem_rows=2, profile="interpret")
      with self.subTest(cluster=cluster):
        self.assertIsNone(round_trip_difference(case))


def write_case(shape=(256,), dtype="float32", cluster=PEER, smem_rows=None, semantics="lane",
               profile="mosaic"):
  """Two CTAs along "x": CTA i stores x[i] + 1 into the SMEM of CTA `cluster`'s index (the other
  one by default; a row of `smem_rows` rows when given), meets the other CTA at a cluster
  barrier, then stores its own SMEM into out[i]."""
  rows = list(shape)
  dst = {"alloc": "smem", "cluster": {"x": cluster}}
  load = {"alloc": "smem"}
  if smem_rows:
    dst["index"] = [smem_rows - 1]
    load["index"] = [smem_rows - 1]
  return {
      "format": 1, "name": "dsmem_write", "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [2] + rows, "dtype": dtype, "fill": {"pattern": "iota"}}],
      "outputs": [{"name": "out", "shape": [2] + rows, "dtype": dtype}],
      "program": [{
          "op": "run_scoped",
          "allocs": [{"name": "smem", "kind": "smem", "dtype": dtype,
                      "shape": [smem_rows] + rows if smem_rows else rows},
                     {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"],
                      "num_arrivals": 1}],
          "body": [
              {"op": "vector_store", "dst": dst,
               "value": {"add": [{"load": {"input": "x", "index": [{"axis": "x"}]}},
                                 {"const": 1}]}},
              {"op": "barrier_arrive", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "barrier_wait", "barrier": {"alloc": "cbar", "index": 0}},
              {"op": "vector_store", "dst": {"output": "out", "index": [{"axis": "x"}]},
               "value": {"load": load}}]}]}


def grid_write_case(axis):
  """grid_case's writes: CTA (a, b) of a (2, 2) cluster stores x[2a + b] + 1000 into the SMEM of
  the CTA whose `axis` coordinate is 1 - its own, syncs, and stores its SMEM into out[2a + b]."""
  case = grid_case(axis, "lane")
  scope = case["program"][0]
  row = scope["body"][0]["src"]["index"][0]
  scope["allocs"] = [a for a in scope["allocs"] if a["kind"] != "barrier"]
  scope["body"] = [
      {"op": "vector_store",
       "dst": {"alloc": "smem", "cluster": {axis: {"axis": axis, "mul": -1, "add": 1}}},
       "value": {"add": [{"load": {"input": "x", "index": [row]}}, {"const": 1000}]}},
      *scope["body"][2:4],
      {"op": "vector_store", "dst": {"output": "out", "index": [row]},
       "value": {"load": {"alloc": "smem"}}}]
  return case


WARPGROUP_WRITE = "Unsupported memory space: #mosaic_gpu.smem_cluster"

WRITE_KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(x_ref, o_ref, smem, cbar):
    i = lax.axis_index("x")
    %s = x_ref[i] + 1
    plgpu.barrier_arrive(cbar.at[0])
    plgpu.barrier_wait(cbar.at[0])
    o_ref[i] = smem[1]

  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((2, 128), jnp.int32),
      scratch_types=[plgpu.SMEM((2, 128), jnp.int32),
                     plgpu.ClusterBarrier(collective_axes=("x",), num_barriers=1)],
      cluster=(2,), cluster_names=("x",))
  return kernel, [jnp.arange(256, dtype=jnp.int32).reshape(2, 128)]
'''


class WriteTest(unittest.TestCase):
  """DSMEM writes: a vector_store into a peer CTA's SMEM (`plgpu.cluster_ref(ref, ...)[...] =
  value`, JAX's swap: under Lane a vector.load of the old value and a vector.store, both through
  the shared::cluster memref that get_cluster_ref's mapa made)."""

  def test_ir_each_cta_writes_the_other_ones_smem(self):
    for kw in ({}, {"dtype": "float16"}, {"shape": (2, 128), "dtype": "int32"},
               {"shape": (128,), "dtype": "int32", "smem_rows": 2}):
      case = write_case(**kw)
      x = input_of(case)
      with self.subTest(**kw):
        low = executor("lower").run(case)
        self.assertEqual(low["kind"], "unavailable", json.dumps(low)[:2000])
        out = executor("ir").run(case)
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x[::-1] + 1)
        self.assertEqual(out["outputs"][0]["written"], [[0, x.size]])
    case = write_case((128,), "int32", cluster={"axis": "x"}, smem_rows=2)  # its own SMEM
    out = executor("ir").run(case)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), input_of(case) + 1)

  def test_ir_cuda_x_is_the_last_pallas_axis(self):
    for axis in ("a", "b"):
      case = grid_write_case(axis)
      x = input_of(case)
      # CTA (a, b) holds what its peer wrote: row 2 (1 - a) + b ("a") or 2 a + 1 - b ("b").
      perm = [2 * (1 - a) + b if axis == "a" else 2 * a + 1 - b for a in (0, 1) for b in (0, 1)]
      out = executor("ir").run(case)
      with self.subTest(axis=axis):
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(typed_output(out, case["outputs"][0]), x[perm] + 1000)

  def test_warpgroup_refuses_the_cluster_memory_space(self):
    # Both releases, a whole or an indexed ref: the dialect lowering of the store's memref.
    for kw in ({}, {"shape": (128,), "dtype": "int32", "smem_rows": 2}):
      case = write_case(semantics="warpgroup", **kw)
      for mode in ("lower", "ir"):
        out = executor(mode).run(case)
        with self.subTest(mode=mode, **kw):
          self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
          d = out["diagnostic"]
          self.assertEqual((d["stage"], d["exception"], d["message"]),
                           ("dialect", "ValueError", WARPGROUP_WRITE))

  def test_interpret_mode_refuses_the_transform(self):
    # The swap's callback validates the transforms as the get's does: CTA 0 computes 1, CTA 1
    # 0, and either thread may fail first (nothing orders them before the store).
    out = executor("interpret").run(write_case(profile="interpret"))
    self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"], d.get("op")),
                     ("run", "ValueError", "$.program[0].body[0]"))
    self.assertIn(d["message"], (interpret_message(1), interpret_message(0)))
    out = executor("interpret").run(write_case((128,), "int32", cluster=0, smem_rows=2,
                                               profile="interpret"))
    self.assertEqual(out["diagnostic"]["message"], interpret_message(0), json.dumps(out)[:2000])

  def test_repro(self):
    def script(case, mode, expected, match=None):
      req = {"case": case, "mode": mode, "expected": expected}
      if match:
        req["match"] = match
      return cfjax_repro.generate(req)
    lowered = {"kind": "completed", "outputs": []}
    src = script(write_case(), "lower", lowered)
    self.assertIn("plgpu.cluster_ref(smem, {'x': 1 - lax.axis_index('x')})[...] = ", src)
    src2 = script(write_case((128,), "int32", cluster=1, smem_rows=2), "lower", lowered)
    self.assertIn("plgpu.cluster_ref(smem.at[1,], {'x': 1})[...] = ", src2)
    r = run_script(src)
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("as predicted: the kernel lowered for CUDA without an error", r.stdout)
    expected = {"kind": "rejected", "diagnostic": {
        "stage": "run", "exception": "ValueError",
        "message": "Unsupported transform: ClusterRefTransform(dims=('x',), idxs=(Array("}}
    r = run_script(script(write_case(profile="interpret"), "interpret", expected, "contains"))
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])
    self.assertIn("as predicted: ValueError at run: Unsupported transform", r.stdout)

  def test_import_forms(self):
    def store(c):
      return {"op": "vector_store", "dst": {"alloc": "smem", "index": [1], "cluster": {"x": c}},
              "value": {"add": [{"load": {"input": "in0", "index": [{"axis": "x"}]}},
                                {"const": 1}]}}  # the importer names the inputs in0, ...
    for lhs, want in (
        ('plgpu.cluster_ref(smem.at[1], {"x": 1 - i})[...]', store(PEER)),
        ('plgpu.cluster_ref(smem, {"x": i}).at[1][...]', store({"axis": "x"})),
        ('plgpu.cluster_ref(smem.at[1], {"x": 0})[...]', store(0))):
      with self.subTest(lhs=lhs):
        case = import_source(WRITE_KERNEL % lhs)
        stores = [op for op in case["program"][0]["body"] if op["op"] == "vector_store"]
        self.assertEqual(stores[0], want)
        self.assertEqual(stores[1]["value"], {"load": {"alloc": "smem", "index": [1]}})

  def test_import_refusals(self):
    from cfjax_import_values import ImportRefused  # pylint: disable=import-outside-toplevel
    for lhs, why in (
        ('plgpu.cluster_ref(smem.at[1], {"x": 0, "y": 1})[...]', "over 2 cluster axes"),
        ('plgpu.cluster_ref(smem.at[1], {"x": lax.rem(i + 1, 2)})[...]',
         "a case's peer CTA is an integer or lax.axis_index(axis) * m + a"),
        ('plgpu.cluster_ref(o_ref.at[0], {"x": 0})[...]',
         "a vector_store writes a peer CTA's SMEM allocation only")):
      with self.subTest(lhs=lhs):
        with self.assertRaises(ImportRefused) as cm:
          import_source(WRITE_KERNEL % lhs)
        self.assertIn(why, str(cm.exception))

  def test_round_trip(self):
    for cluster in (PEER, 0, {"axis": "x"}):
      for rows in (None, 2):
        case = write_case((128,), "int32", cluster=cluster, smem_rows=rows, profile="interpret")
        with self.subTest(cluster=cluster, rows=rows):
          self.assertIsNone(round_trip_difference(case))


if __name__ == "__main__":
  unittest.main()
