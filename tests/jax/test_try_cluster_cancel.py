"""plgpu.try_cluster_cancel (cluster launch control, Blackwell; the case's `try_cluster_cancel` op)
through the Python side: the translation and the repro script, jax-ir's model of the try_cancel
PTX (the 16-byte response and its complete_tx multicast to every CTA of the cluster), the errors
JAX raises for it, and `collfuzz import`.

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
from cfjax_case import CaseError, cancel_params  # noqa: E402
from cfjax_import_values import ImportRefused  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_source, run_script  # noqa: E402

CANCEL = "$.program[0].body[0]"


def case(axes, semantics="lane", threads=None, arch="sm_100a", profile="mosaic",
         result=((16,), "uint8"), cluster=2):
  """A cluster of `cluster` CTAs along x (and `threads` warpgroups along wg): try_cluster_cancel
  into `res` on bar[0] with `axes` as collective_axes, then a barrier_wait on it. With several
  warpgroups the allocations are collective over wg (one barrier, num_arrivals per warpgroup)."""
  mesh = {"cluster": [cluster], "cluster_names": ["x"]}
  scope = {"op": "run_scoped", "allocs": [
      {"name": "res", "kind": "smem", "shape": list(result[0]), "dtype": result[1]},
      {"name": "bar", "kind": "barrier", "num_arrivals": threads or 1, "num_barriers": 1}]}
  if threads:
    mesh.update(num_threads=threads, thread_name="wg")
    scope["collective_axes"] = ["wg"]
  op = {"op": "try_cluster_cancel", "result": {"alloc": "res"},
        "barrier": {"alloc": "bar", "index": 0}}
  if axes is not None:
    op["collective_axes"] = axes
  scope["body"] = [op, {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}}]
  return {"format": 1, "name": "try_cluster_cancel", "mesh": mesh,
          "target": {"arch": arch, "semantics": semantics, "profile": profile},
          "inputs": [], "program": [scope]}


def script(c, mode="interpret"):
  return cfjax_repro.generate({"case": c, "mode": mode, "expected": {"kind": "completed"}})


class TranslationTest(unittest.TestCase):

  def test_params(self):
    op = {"result": {"alloc": "res"}}
    self.assertEqual(cancel_params(op), ("res", ()))
    self.assertEqual(cancel_params(dict(op, collective_axes=[])), ("res", ()))
    self.assertEqual(cancel_params(dict(op, collective_axes="x")), ("res", ("x",)))
    self.assertEqual(cancel_params(dict(op, collective_axes=["wg", "x"])), ("res", ("wg", "x")))
    for bad in ({"result": {"alloc": "res", "index": [0]}}, {"result": "res"},
                dict(op, collective_axes=[["x", "y"]])):
      with self.assertRaises(CaseError):
        cancel_params(bad, "$.program[0]")

  def test_script_text(self):
    src = script(case(["x"]))
    self.assertIn(f"plgpu.try_cluster_cancel(res, bar.at[0], collective_axes=('x',))  # {CANCEL}",
                  src)
    for axes in ([], None):
      self.assertIn(f"plgpu.try_cluster_cancel(res, bar.at[0])  # {CANCEL}", script(case(axes)))
    src = script(case(["wg", "x"], threads=2))
    self.assertIn("plgpu.try_cluster_cancel(res, bar.at[0], collective_axes=('wg', 'x'))", src)

  def test_script_lowers(self):
    for sem in ("lane", "warpgroup"):
      with self.subTest(semantics=sem):
        r = run_script(script(case(["x"], sem), "lower"))
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-3000:])


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

  def run_ir(self, c, check_waits=True):
    out = executor("ir").run(c)
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    for cta in out["ctas"]:
      (buf,) = [b for b in cta["buffers"] if b["alloc"] == "res"]
      self.assertEqual(buf["hex"], "00" * 16, cta)  # the response reached every CTA
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


KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(o_ref, res, bar):
    %s
    plgpu.barrier_wait(bar.at[0])
  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32),
      scratch_types=[plgpu.SMEM((16,), jnp.uint8), plgpu.Barrier(num_barriers=1)],
      cluster=(2,), cluster_names=("x",))
  return kernel, []
'''


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

  def test_string_axis(self):
    body = import_source(KERNEL % 'plgpu.try_cluster_cancel(res, bar.at[0], collective_axes="x")')
    self.assertEqual(body["program"][0]["body"][0],
                     {"op": "try_cluster_cancel", "result": {"alloc": "res"},
                      "barrier": {"alloc": "bar", "index": 0}, "collective_axes": ["x"]})

  def test_refused(self):
    for call, words in (
        ("plgpu.try_cluster_cancel(res.at[pl.ds(0, 16)], bar.at[0])",
         "try_cluster_cancel's result `res` is indexed"),
        ("plgpu.try_cluster_cancel(res, bar.at[0]); plgpu.query_cluster_cancel(res, "
         "grid_names=())", "query_cluster_cancel is not modelled"),
        # A value loaded before the cancel and stored after it: the case would read the response.
        ("v = res[...]; plgpu.try_cluster_cancel(res, bar.at[0]); res[...] = v",
         "which the try_cluster_cancel at line")):
      with self.subTest(words=words):
        with self.assertRaises(ImportRefused) as cm:
          import_source(textwrap.dedent(KERNEL % call))
        self.assertIn(words, str(cm.exception))
        self.assertRegex(str(cm.exception), r"k\.py:\d+: ")


if __name__ == "__main__":
  unittest.main()
