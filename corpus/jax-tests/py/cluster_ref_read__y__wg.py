"""For `collfuzz import`: JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallWGTest.test_cluster_ref_read with axis_name="y" (Warpgroup
lowering semantics): the test's kernel (_cluster_ref_read.py) with this parameter. The
hand-written case is ../cluster_ref_read__y__wg.json.
"""
from jax.experimental.pallas import mosaic_gpu as plgpu

from _cluster_ref_read import kernel_and_args


def collfuzz_case():
  return kernel_and_args("y", plgpu.LoweringSemantics.Warpgroup)
