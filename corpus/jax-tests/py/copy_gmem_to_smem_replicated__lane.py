"""PallasCallTCGen05Test's run of copy_gmem_to_smem_replicated (Lane semantics): py/copy_gmem_to_smem_replicated.py with its
compiler_params set so. Written by tools/jax_tests_other_class.py.

For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTCGen05Test.test_copy_gmem_to_smem_replicated.

A REPLICATED leader-tracked copy over x (cluster (2,)) of f32[64, 64]; CTA 0 waits on the TMA
barrier, then both CTAs meet on a cluster barrier and write the SMEM buffer out. Differences from
the test: its vector store `out[...] = a_smem[...]` is a copy_smem_to_gmem here (a case has no
vector stores; the same bytes reach the output). Its random input (jax.random.uniform with the
test's key) is imported as a `jax_random` fill: the same numbers, as the recipe that drew them.
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(a_gmem, out_gmem, a_smem, tma_barrier, cluster_barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier, collective_axes="x",
                            leader_tracked=plgpu.CopyPartition.REPLICATED)

    @pl.when(lax.axis_index("x") == 0)
    def _():
      plgpu.barrier_wait(tma_barrier)

    plgpu.barrier_arrive(cluster_barrier)
    plgpu.barrier_wait(cluster_barrier)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(a_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
      scratch_types=[plgpu.SMEM((64, 64), jnp.float32),
                     plgpu.Barrier(num_arrivals=1),
                     plgpu.ClusterBarrier(collective_axes=("x",))],
      cluster=(2,),
      cluster_names=("x",),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )
  a = jax.random.uniform(jax.random.key(0), (64, 64), jnp.float32)
  return kernel, [a]
