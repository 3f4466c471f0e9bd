"""plgpu.try_cluster_cancel (cluster launch control, Blackwell; the case's `try_cluster_cancel` op)
through the Python side: the translation and the repro script, jax-ir's model of the try_cancel
PTX (the 16-byte response and its complete_tx multicast to every CTA of the cluster), the errors
JAX raises for it, and `collfuzz import`; a result indexed by static integers on its leading dims
(`"result": {"alloc": "res", "index": [1]}`, `res.at[1]` of a uint8[2, 16], as JAX's
test_cluster_launch_control(with_indexing=True) does with plgpu.TryClusterCancelResult(2)).

    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax/bin/python -m unittest discover -s tests/jax \
        -p 'test_try_cluster_cancel.py'
"""

import json
import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import cfjax_repro  # noqa: E402
import cfjax_translate  # noqa: E402
from cfjax_case import CaseError, cancel_params  # noqa: E402
from cfjax_import_values import ImportRefused  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_source, run_script  # noqa: E402

CANCEL = "$.program[0].body[0]"


def case(axes, semantics="lane", threads=None, arch="sm_100a", profile="mosaic",
         result=((16,), "uint8"), cluster=2, index=None):
  """A cluster of `cluster` CTAs along x (and `threads` warpgroups along wg): try_cluster_cancel
  into `res` (`res.at[*index]` with an index) on bar[0] with `axes` as collective_axes, then a
  barrier_wait on it. With several warpgroups the allocations are collective over wg (one
  barrier, num_arrivals per warpgroup)."""
  mesh = {"cluster": [cluster], "cluster_names": ["x"]}
  scope = {"op": "run_scoped", "allocs": [
      {"name": "res", "kind": "smem", "shape": list(result[0]), "dtype": result[1]},
      {"name": "bar", "kind": "barrier", "num_arrivals": threads or 1, "num_barriers": 1}]}
  if threads:
    mesh.update(num_threads=threads, thread_name="wg")
    scope["collective_axes"] = ["wg"]
  op = {"op": "try_cluster_cancel", "result": {"alloc": "res"},
        "barrier": {"alloc": "bar", "index": 0}}
  if index is not None:
    op["result"]["index"] = index
  if axes is not None:
    op["collective_axes"] = axes
  scope["body"] = [op, {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}]
  return {"format": 1, "name": "try_cluster_cancel", "mesh": mesh,
          "target": {"arch": arch, "semantics": semantics, "profile": profile},
          "inputs": [], "program": [scope]}


def script(c, mode="interpret"):
  return cfjax_repro.generate({"case": c, "mode": mode, "expected": {"kind": "completed"}})


def indexed(sem="lane", result=((2, 16), "uint8"), index=(1,), **kw):
  """The one-issuer case (collective over x) with its result `res.at[*index]`."""
  return case(["x"], sem, result=result, index=list(index), **kw)


class TranslationTest(unittest.TestCase):

  def test_params(self):
    op = {"result": {"alloc": "res"}}
    self.assertEqual(cancel_params(op), ("res", (), ()))
    self.assertEqual(cancel_params(dict(op, collective_axes=[])), ("res", (), ()))
    self.assertEqual(cancel_params(dict(op, collective_axes="x")), ("res", (), ("x",)))
    self.assertEqual(cancel_params(dict(op, collective_axes=["wg", "x"])),
                     ("res", (), ("wg", "x")))
    self.assertEqual(cancel_params({"result": {"alloc": "res", "index": [1]}}),
                     ("res", (1,), ()))
    self.assertEqual(cancel_params({"result": {"alloc": "res", "index": [1, 0]},
                                    "collective_axes": ["x"]}), ("res", (1, 0), ("x",)))
    self.assertEqual(cancel_params({"result": {"alloc": "res", "index": []}}), ("res", (), ()))
    for bad, field in (({"result": "res"}, "$.program[0].result:"),
                       ({"result": {"alloc": "res", "idx": [0]}}, "$.program[0].result:"),
                       (dict(op, collective_axes=[["x", "y"]]), "$.program[0].collective_axes"),
                       ({"result": {"alloc": "res", "index": 1}}, "$.program[0].result.index"),
                       ({"result": {"alloc": "res", "index": [-1]}}, "$.program[0].result.index"),
                       ({"result": {"alloc": "res", "index": [True]}},
                        "$.program[0].result.index"),
                       ({"result": {"alloc": "res", "index": [{"axis": "x"}]}},
                        "$.program[0].result.index"),
                       ({"result": {"alloc": "res", "index": ["1"]}},
                        "$.program[0].result.index")):
      with self.subTest(bad=bad):
        with self.assertRaises(CaseError) as cm:
          cancel_params(bad, "$.program[0]")
        self.assertIn(field, str(cm.exception))

  def test_script_text(self):
    src = script(case(["x"]))
    self.assertIn(f"plgpu.try_cluster_cancel(res, bar.at[0], collective_axes=('x',))  # {CANCEL}",
                  src)
    for axes in ([], None):
      self.assertIn(f"plgpu.try_cluster_cancel(res, bar.at[0])  # {CANCEL}", script(case(axes)))
    src = script(case(["wg", "x"], threads=2))
    self.assertIn("plgpu.try_cluster_cancel(res, bar.at[0], collective_axes=('wg', 'x'))", src)
    self.assertIn(f"plgpu.try_cluster_cancel(res.at[1], bar.at[0], collective_axes=('x',))  "
                  f"# {CANCEL}", script(indexed()))
    self.assertIn("plgpu.try_cluster_cancel(res.at[1, 0], bar.at[0], collective_axes=('x',))",
                  script(indexed(result=((2, 2, 16), "uint8"), index=(1, 0))))
    self.assertIn(f"plgpu.try_cluster_cancel(res, bar.at[0], collective_axes=('x',))  "
                  f"# {CANCEL}", script(case(["x"], index=[])))

  def test_translation_ref(self):
    # cfjax_translate passes `env[res].at[index]`: a recorded plgpu.try_cluster_cancel sees a ref
    # of the row's shape with one NDIndexer (the whole allocation's ref for no index). Which row
    # it is, the jax-ir test test_indexed_result tells (the response's offset).
    seen = []
    real = cfjax_translate.plgpu.try_cluster_cancel
    cfjax_translate.plgpu.try_cluster_cancel = lambda r, b, **kw: seen.append((r, kw))
    try:
      for c, shape, n in ((indexed(), (16,), 1),
                          (indexed(result=((2, 2, 16), "uint8"), index=(1, 0)), (16,), 1),
                          (case(["x"], result=((2, 16), "uint8"), index=[]), (2, 16), 0)):
        with self.subTest(result=c["program"][0]["body"][0]["result"]):
          seen.clear()
          out = executor("lower").run(c)
          self.assertNotEqual(out["kind"], "error", json.dumps(out)[:3000])
          ((ref, kw),) = seen
          self.assertEqual(kw, {"collective_axes": ("x",)})
          self.assertEqual(tuple(ref.shape), shape)
          transforms = getattr(ref, "transforms", ())
          self.assertEqual([type(t).__name__ for t in transforms], ["NDIndexer"] * n)
    finally:
      cfjax_translate.plgpu.try_cluster_cancel = real

  def test_script_lowers(self):
    for sem in ("lane", "warpgroup"):
      for c in (case(["x"], sem), indexed(sem), indexed(sem, ((2, 16), "int8"), (0,))):
        with self.subTest(semantics=sem, result=c["program"][0]["body"][0]["result"]):
          r = run_script(script(c, "lower"))
          self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])

  def test_indexed_lowers(self):
    # jax-lower through cfjax_translate: res.at[1] of uint8[2, 16] and int8[2, 16] is 128 bits
    # and lowers on both semantics; the whole uint8[2, 16] (256 bits) is JAX's TypeError.
    for sem in ("lane", "warpgroup"):
      for c in (indexed(sem), indexed(sem, ((2, 16), "int8"), (0,)),
                indexed(sem, ((2, 2, 16), "uint8"), (1, 1))):
        with self.subTest(semantics=sem, result=c["program"][0]["body"][0]["result"]):
          out = executor("lower").run(c)
          self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:3000])
          self.assertIn("lowered for CUDA without an error", out["reason"])
      out = executor("lower").run(case(["x"], sem, result=((2, 16), "uint8")))
      self.assertEqual(out["kind"], "rejected", out)
      self.assertEqual(out["diagnostic"]["message"],
                       "Try cluster cancel response must be 128 bits, but is 256 bits.")


def barriers(out):
  """(armed, received, phases, tx) of bar[0] in each CTA of a jax-ir outcome."""
  got = []
  for cta in out["ctas"]:
    (b,) = cta["barriers"]
    got.append((b["armed"], b["received"], b["phases"], b["tx"]))
  return got


class IrTest(unittest.TestCase):
  """jax-ir on sm_100a: `@$2 clusterlaunchcontrol.try_cancel...multicast::cluster::all.b128`,
  issued by each issuing warpgroup's one lane, writes 16 bytes (zeros) at the result's offset in
  every CTA of the cluster and completes 16 bytes of tx on the barrier at the same offset in each."""

  def run_ir(self, c, check_waits=True, want_hex="00" * 16):
    out = executor("ir").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    for cta in out["ctas"]:
      (buf,) = [b for b in cta["buffers"] if b["alloc"] == "res"]
      self.assertEqual(buf["hex"], want_hex, cta)  # the response reached every CTA
      if check_waits:
        self.assertTrue(cta["waits"] and all(w["completed"] for w in cta["waits"]), cta)
    return out

  def test_one_issuer(self):
    # collective over x: CTA 0 issues; each CTA's barrier armed 16 by its own arrival and
    # completed by the multicast response.
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        out = self.run_ir(case(["x"], sem))
        self.assertEqual(barriers(out), [(16, 16, 1, 0)] * 2)

  def test_every_cta_issues(self):
    # collective_axes []: both CTAs issue, each barrier receives both responses (32 bytes) for
    # the 16 it armed (its phase completed by the first; tx left at -16).
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        out = self.run_ir(case([], sem))
        self.assertEqual(barriers(out), [(16, 32, 1, -16)] * 2)

  def test_two_warpgroups(self):
    # Warpgroup: a commit_smem before the scope keeps its entry block sync apart (jax-ir
    # attributes it to the collective run_scoped).
    for sem in ("lane", "warpgroup"):
      for axes, want in ((["wg", "x"], (16, 16, 1, 0)), (["x"], (32, 32, 1, 0))):
        with self.subTest(semantics=sem, axes=axes):
          c = case(axes, sem, threads=2)
          if sem == "warpgroup":
            c["program"].insert(0, {"op": "commit_smem"})
          out = self.run_ir(c)
          self.assertEqual(barriers(out), [want] * 2)
          for cta in out["ctas"]:
            self.assertEqual(cta["barriers"][0]["arrivals"], 2)

  def test_indexed_result(self):
    # res.at[1] of uint8[2, 16]: the response lands at byte offset 16 of `res` in both CTAs (the
    # first row keeps the SMEM sentinel 0xA5), each barrier armed 16 and received 16.
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        out = self.run_ir(indexed(sem), want_hex="a5" * 16 + "00" * 16)
        self.assertEqual(barriers(out), [(16, 16, 1, 0)] * 2)
    out = self.run_ir(indexed(result=((2, 16), "int8"), index=(0,)),
                      want_hex="00" * 16 + "a5" * 16)
    self.assertEqual(barriers(out), [(16, 16, 1, 0)] * 2)

  def test_four_ctas(self):
    out = self.run_ir(case(["x"], cluster=4))
    self.assertEqual(barriers(out), [(16, 16, 1, 0)] * 4)

  def test_sm90a_unavailable(self):
    out = executor("ir").run(case(["x"], arch="sm_90a"))
    self.assertEqual(out["kind"], "unavailable", out)
    self.assertEqual(out["reason"], "compile: sm_100 PTX on sm_90a (ptxas is not run)")


class ErrorsTest(unittest.TestCase):

  def test_interpret(self):
    # The GPU interpreter (InterpretGPUParams) models try_cluster_cancel as an always-failing
    # cancel: each thread's arrival (no expect_tx), the response never written.
    out = executor("interpret").run(case(["x"], profile="interpret"))
    self.assertEqual(out["kind"], "completed", out)
    for cta in out["ctas"]:
      (b,) = cta["barriers"]
      self.assertEqual((b["arrivals"], b["phases"]), (1, 1), b)
      self.assertTrue(all(w["completed"] for w in cta["waits"]), cta)

  def test_not_128_bits(self):
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        out = executor("lower").run(case(["x"], sem, result=((8,), "uint8")))
        self.assertEqual(out["kind"], "rejected", out)
        d = out["diagnostic"]
        self.assertEqual((d["stage"], d["exception"], d["message"]),
                         ("lower", "TypeError",
                          "Try cluster cancel response must be 128 bits, but is 64 bits."))

  def test_uint32_result(self):
    # 128 bits of uint32: Lane lowers; Warpgroup's dialect op wants 8-bit integers (a JAX bug).
    out = executor("lower").run(case(["x"], "lane", result=((4,), "uint32")))
    self.assertEqual(out["kind"], "unavailable", out)
    self.assertIn("lowered for CUDA without an error", out["reason"])
    out = executor("lower").run(case(["x"], "warpgroup", result=((4,), "uint32")))
    self.assertEqual(out["kind"], "rejected", out)
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"]), ("verify", "VerificationError"), d)
    self.assertIn("'mosaic_gpu.try_cluster_cancel' op operand #0 must be 1D memref of 8-bit "
                  "signless integer values, but got 'memref<4xi32", d["message"])

  def test_uint32_indexed_result(self):
    # uint32[2, 4].at[1]: Lane lowers; Warpgroup's verifier refuses the strided row.
    c = indexed("lane", ((2, 4), "uint32"))
    out = executor("lower").run(c)
    self.assertEqual(out["kind"], "unavailable", out)
    out = executor("lower").run(indexed("warpgroup", ((2, 4), "uint32")))
    self.assertEqual(out["kind"], "rejected", out)
    d = out["diagnostic"]
    self.assertEqual((d["stage"], d["exception"]), ("verify", "VerificationError"), d)
    self.assertIn("'mosaic_gpu.try_cluster_cancel' op operand #0 must be 1D memref of 8-bit "
                  "signless integer values, but got 'memref<4xi32, strided<[1], offset: ?>, "
                  "#gpu.address_space<workgroup>>'", d["message"])

  def test_interpret_indexed(self):
    out = executor("interpret").run(indexed(profile="interpret"))
    self.assertEqual(out["kind"], "completed", out)
    for cta in out["ctas"]:
      (b,) = cta["barriers"]
      self.assertEqual((b["arrivals"], b["phases"]), (1, 1), b)


KERNEL = '''
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(o_ref, res, bar):
    %s
    plgpu.barrier_wait(bar.at[0])
  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32),
      scratch_types=[plgpu.SMEM(%s, jnp.uint8), plgpu.Barrier(num_barriers=1)],
      cluster=(2,), cluster_names=("x",))
  return kernel, []
'''


def kernel(call, shape="(16,)"):
  """KERNEL with `call` in its body and `res` an SMEM uint8 of `shape`."""
  return textwrap.dedent(KERNEL % (call, shape))


class ImportTest(unittest.TestCase):

  def ops(self, c):
    return import_source(script(c))["program"][0]["body"]

  def test_round_trip(self):
    for axes, threads in ((["x"], None), (None, None), (["wg", "x"], 2), (["x"], 2)):
      with self.subTest(axes=axes, threads=threads):
        c = case(axes, threads=threads)
        self.assertEqual(self.ops(c), c["program"][0]["body"])
    c = case([])
    del c["program"][0]["body"][0]["collective_axes"]  # [] comes back as absent (JAX's ())
    self.assertEqual(self.ops(case([])), c["program"][0]["body"])

  def test_round_trip_indexed(self):
    for c in (indexed(), indexed(result=((2, 16), "int8"), index=(0,)),
              indexed(result=((2, 2, 16), "uint8"), index=(1, 0)),
              indexed(threads=2)):
      with self.subTest(result=c["program"][0]["body"][0]["result"]):
        self.assertEqual(self.ops(c), c["program"][0]["body"])
    c = case(["x"], index=[])  # an empty index comes back as the whole ref (no "index")
    del c["program"][0]["body"][0]["result"]["index"]
    self.assertEqual(self.ops(case(["x"], index=[])), c["program"][0]["body"])

  def test_string_axis(self):
    body = import_source(kernel('plgpu.try_cluster_cancel(res, bar.at[0], collective_axes="x")'))
    self.assertEqual(body["program"][0]["body"][0],
                     {"op": "try_cluster_cancel", "result": {"alloc": "res"},
                      "barrier": {"alloc": "bar", "index": 0}, "collective_axes": ["x"]})

  def test_indexed_kernel(self):
    # JAX's test_cluster_launch_control(with_indexing=True) spelling, and `:` after the index.
    for call in ("plgpu.try_cluster_cancel(res.at[1], bar.at[0])",
                 "plgpu.try_cluster_cancel(res.at[1, :], bar.at[0])"):
      with self.subTest(call=call):
        body = import_source(kernel(call, "(2, 16)"))
        self.assertEqual(body["program"][0]["body"][0],
                         {"op": "try_cluster_cancel", "result": {"alloc": "res", "index": [1]},
                          "barrier": {"alloc": "bar", "index": 0}})
    # A slice of the whole dim (`:`, pl.ds(0, 16): one NDIndexer entry in JAX) is the whole ref.
    for call in ("plgpu.try_cluster_cancel(res.at[:], bar.at[0])",
                 "plgpu.try_cluster_cancel(res.at[pl.ds(0, 16)], bar.at[0])"):
      with self.subTest(call=call):
        body = import_source(kernel(call))
        self.assertEqual(body["program"][0]["body"][0]["result"], {"alloc": "res"})

  def test_refused(self):
    for call, shape, words in (
        ("plgpu.try_cluster_cancel(res.at[pl.ds(16, 16)], bar.at[0])", "(32,)",
         "try_cluster_cancel's result `res` is indexed with a slice ({'start': 16, 'size': 16}"),
        ("plgpu.try_cluster_cancel(res.at[1, pl.ds(0, 8)], bar.at[0])", "(2, 16)",
         "try_cluster_cancel's result `res` is indexed with a slice ({'start': 0, 'size': 8}"),
        ("plgpu.try_cluster_cancel(res.at[lax.axis_index('x')], bar.at[0])", "(2, 16)",
         "try_cluster_cancel's result `res` is indexed with {'axis': 'x'} (not a static"),
        ("plgpu.try_cluster_cancel(res.at[0], bar.at[0])", "(16,)",
         "try_cluster_cancel's result `res` is indexed with [0]: 1 integers on its 1 dims"),
        ("plgpu.try_cluster_cancel(res.bitcast(jnp.int8), bar.at[0])", "(16,)",
         "try_cluster_cancel's result: the ref of `res` is transformed by"),
        ("plgpu.try_cluster_cancel(res, bar.at[0]); plgpu.query_cluster_cancel(res, "
         "grid_names=())", "(16,)", "query_cluster_cancel is not modelled"),
        # A value loaded before the cancel and stored after it: the case would read the response.
        ("v = res[...]; plgpu.try_cluster_cancel(res, bar.at[0]); res[...] = v", "(16,)",
         "which the try_cluster_cancel at line"),
        ("v = res.at[1][...]; plgpu.try_cluster_cancel(res.at[1], bar.at[0]); "
         "res.at[1][...] = v", "(2, 16)", "which the try_cluster_cancel at line")):
      with self.subTest(words=words):
        with self.assertRaises(ImportRefused) as cm:
          import_source(kernel(call, shape))
        self.assertIn(words, str(cm.exception))
        self.assertRegex(str(cm.exception), r"k\.py:\d+: ")

  def test_other_row_not_stale(self):
    # The cancel writes row 1 only: a load of row 0 before it, stored after, stays fresh.
    body = import_source(kernel("v = res.at[0][...]; plgpu.try_cluster_cancel(res.at[1], "
                                "bar.at[0]); res.at[0][...] = v", "(2, 16)"))
    self.assertEqual([op["op"] for op in body["program"][0]["body"]],
                     ["try_cluster_cancel", "vector_store", "barrier_wait"])


if __name__ == "__main__":
  unittest.main()
