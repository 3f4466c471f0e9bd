"""PallasCallTest's run of leader_tracked_cluster_barrier (Lane semantics): py/leader_tracked_cluster_barrier.py with its
compiler_params set so. Written by tools/jax_tests_other_class.py.

For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_leader_tracked_cluster_barrier.

A leader-tracked ClusterBarrier over x (cluster (2,)): every CTA arrives, only CTA 0 waits.
Difference from the test: its kernel also stores a scalar into its output, which the test does not
check and a case cannot hold; it is left out.
"""
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body():
    def scope(collective_barrier):
      plgpu.barrier_arrive(collective_barrier)

      @pl.when(lax.axis_index("x") == 0)
      def _():
        plgpu.barrier_wait(collective_barrier)

    pl.run_scoped(scope, plgpu.ClusterBarrier(collective_axes=("x",), leader_tracked=True))

  kernel = plgpu.kernel(body, out_type=(), cluster=(2,), cluster_names=("x",), compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
  return kernel, []
