"""PallasCallWGTest's run of collective_arrival_count (Warpgroup semantics): py/collective_arrival_count.py with its
compiler_params set so. Written by tools/jax_tests_other_class.py.

For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_collective_arrival_count.

A ClusterBarrier over x (cluster (2,)) with num_arrivals=4: every CTA arrives four times, waits,
then stores ones into its int32[128] output with a vector store (`dst[...] = jnp.ones_like(dst)`,
a `vector_store` of the constant 1), as the test does. PallasCallTest's self.kernel runs under
Lane semantics (the test class's default), so the compiler params say so.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(dst):
    def scope(collective_barrier):
      for _ in range(4):
        plgpu.barrier_arrive(collective_barrier)
      plgpu.barrier_wait(collective_barrier)
      dst[...] = jnp.ones_like(dst)

    pl.run_scoped(scope, plgpu.ClusterBarrier(collective_axes=("x",), num_arrivals=4))

  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((128,), jnp.int32), cluster=(2,),
      cluster_names=("x",),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup))
  return kernel, []
