"""PallasCallTCGen05WGTest's run of copy_gmem_to_smem_partitioned__warp_level_True_squeezed_index_False (Warpgroup semantics): py/copy_gmem_to_smem_partitioned__warp_level_True_squeezed_index_False.py with its
compiler_params set so. Written by tools/jax_tests_other_class.py.

For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTCGen05Test.test_copy_gmem_to_smem_partitioned
with warp_level=True, squeezed_index=False.

Two PARTITIONED(0) copies over x (cluster (2,)) of f32[128, 128] into f32[64, 128] halves, issued
by warp 0 of each CTA (`plgpu.warp_map`, `pl.when(warp_id == 0)`); CTA 0
waits on both TMA barriers, then both CTAs meet on a cluster barrier.
Every CTA then stores `out_gmem[pl.ds(axis_index("x") * 64, 64)] = a_smem[...] + b_smem[...]`,
as the test does, on the test's own random inputs (jax.random.uniform of the split key(0), which
`collfuzz import` recognises as a `jax_random` fill).
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(a_gmem, b_gmem, out_gmem, a_smem, b_smem, a_tma_barrier, b_tma_barrier, cluster_barrier):
    partitioned = plgpu.CopyPartition.PARTITIONED(0)

    @plgpu.warp_map
    def _per_warp(warp_id):
      @pl.when(warp_id == 0)
      def _():
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, a_tma_barrier, collective_axes="x",
                                leader_tracked=partitioned)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, b_tma_barrier, collective_axes="x",
                                leader_tracked=partitioned)

    @pl.when(lax.axis_index("x") == 0)
    def _():
      plgpu.barrier_wait(a_tma_barrier)
      plgpu.barrier_wait(b_tma_barrier)

    plgpu.barrier_arrive(cluster_barrier)
    plgpu.barrier_wait(cluster_barrier)
    out_slice = pl.ds(lax.axis_index("x") * 64, 64)
    out_gmem[out_slice] = a_smem[...] + b_smem[...]

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
      scratch_types=[plgpu.SMEM((64, 128), jnp.float32),
                     plgpu.SMEM((64, 128), jnp.float32),
                     plgpu.Barrier(num_arrivals=1),
                     plgpu.Barrier(num_arrivals=1),
                     plgpu.ClusterBarrier(collective_axes=("x",))],
      cluster=(2,),
      cluster_names=("x",),
      # As the test's self.kernel(...) does: PallasCallTCGen05Test runs under Lane semantics.
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),
  )
  ka, kb = jax.random.split(jax.random.key(0))
  a = jax.random.uniform(ka, (128, 128), jnp.float32)
  b = jax.random.uniform(kb, (128, 128), jnp.float32)
  return kernel, [a, b]
