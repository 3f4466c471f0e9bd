"""For `collfuzz import`: JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallWGTest.test_tma_load_multicast (PallasCallTest's test,
inherited, under Warpgroup lowering semantics) with collective_dims=('z',),
noncollective_dims=(), collective_dim_size=1: the test's kernel (_tma_load_multicast.py)
with these parameters. The hand-written case is ../tma_load_multicast_wg__z_1.json.
Written by tools/jax_tests_tma_load_multicast.py.
"""
from jax.experimental.pallas import mosaic_gpu as plgpu

from _tma_load_multicast import kernel_and_args


def collfuzz_case():
  return kernel_and_args(('z',), (), 1, plgpu.LoweringSemantics.Warpgroup)
