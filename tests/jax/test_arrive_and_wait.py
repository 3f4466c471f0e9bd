"""plgpu.barrier_arrive_and_wait (JAX 0.12.0.1; docs/case-format.md "barrier_arrive_and_wait")
through the Python side: the translation run by interpret mode and by jax-ir, the repro script
and `collfuzz import`, on the release that has it; on 0.11.2 the attribute is missing and tracing
raises the AttributeError the reference predicts (rule barrier.arrive_and_wait.missing).

    .venv-jax/bin/python -m unittest discover -s tests/jax
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax
"""

import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import jax  # noqa: E402
from jax.experimental.pallas import mosaic_gpu as plgpu  # noqa: E402

import cfjax_repro  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_source  # noqa: E402

HAS_IT = hasattr(plgpu, "barrier_arrive_and_wait")


def case(profile="interpret"):
  """A ClusterBarrier over x (cluster (2,)); every CTA arrives and waits in one call."""
  return {
      "format": 1, "name": "arrive_and_wait", "mesh": {"cluster": [2], "cluster_names": ["x"]},
      "target": {"arch": "sm_90a", "profile": profile},
      "inputs": [],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "cbar", "kind": "cluster_barrier", "collective_axes": ["x"],
           "num_barriers": []}],
          "body": [{"op": "barrier_arrive_and_wait", "barrier": {"alloc": "cbar"}}]}],
  }


class ArriveAndWaitTest(unittest.TestCase):

  def test_interpret(self):
    out = executor("interpret").run(case())
    if not HAS_IT:
      self.assertEqual(out["kind"], "rejected", out)
      d = out["diagnostic"]
      self.assertEqual(d["exception"], "AttributeError")
      self.assertEqual(d["message"], "module 'jax.experimental.pallas.mosaic_gpu' has no "
                       "attribute 'barrier_arrive_and_wait'")
      self.assertEqual(d["stage"], "trace")
      return
    self.assertEqual(out["kind"], "completed", out)
    for cta in out["ctas"]:
      (b,) = cta["barriers"]
      self.assertEqual((b["count"], b["arrivals"], b["phases"]), (2, 2, 1), b)
      (w,) = cta["waits"]
      self.assertEqual((w["op"], w["phase"], w["completed"]), ("$.program[0].body[0]", 0, True))

  @unittest.skipUnless(HAS_IT, "JAX 0.12.0.1 only")
  def test_ir(self):
    out = executor("ir").run(case("mosaic"))
    self.assertEqual(out["kind"], "completed", out)
    for cta in out["ctas"]:
      (w,) = cta["waits"]
      self.assertTrue(w["completed"], w)

  def test_repro_script(self):
    src = cfjax_repro.generate({"case": case(), "mode": "interpret",
                                "expected": {"kind": "completed"}})
    self.assertIn("plgpu.barrier_arrive_and_wait(cbar)", src)

  @unittest.skipUnless(HAS_IT, "JAX 0.12.0.1 only")
  def test_import(self):
    kernel = textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def collfuzz_case():
          def body(x_ref, y_ref, cbar):
            plgpu.barrier_arrive_and_wait(cbar)
          kernel = plgpu.kernel(
              body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32),
              scratch_types=[plgpu.ClusterBarrier(collective_axes=("x",))],
              cluster=(2,), cluster_names=("x",))
          return kernel, [jnp.zeros((8,), jnp.float32)]
        ''')
    c = import_source(kernel)
    ops = c["program"][0]["body"]
    self.assertEqual([op["op"] for op in ops], ["barrier_arrive_and_wait"], ops)


if __name__ == "__main__":
  unittest.main()
