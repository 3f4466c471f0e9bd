"""For `collfuzz import`: the cluster pattern kernels use most, written as a kernel engineer writes
it (not one of JAX's tests; corpus/kernels/fori_loop_multicast_tiles.json is its hand-written case
with the expectations derived by hand).

A cluster of 2 CTAs; `lax.fori_loop(0, 3, step)`: trip i multicasts tile i of x
(`x_ref.at[pl.ds(i * 16, 16)]`, 16x32 f32) over the cluster axis into one SMEM tile, waits on the
same barrier (its phase flips every trip), stores the tile to
`y_ref.at[lax.axis_index("cluster"), pl.ds(i * 16, 16)]`, and syncs the cluster on a ClusterBarrier
so that the next trip's multicast (which writes half of the peer's tile) lands only after the peer
has stored the tile (`wait_smem_to_gmem(0)` ends its read of the tile). Without that sync the next
multicast races with the peer's store. Expected: y[c] == x for both CTAs.
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, y_ref, tile, bar, cbar):
    def step(i, carry):
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(i * 16, 16)], tile, bar, collective_axes="cluster")
      plgpu.barrier_wait(bar)
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(tile, y_ref.at[lax.axis_index("cluster"), pl.ds(i * 16, 16)])
      plgpu.wait_smem_to_gmem(0)
      plgpu.barrier_arrive(cbar)
      plgpu.barrier_wait(cbar)
      return carry

    lax.fori_loop(0, 3, step, None)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((2, 48, 32), jnp.float32),
      scratch_types=[plgpu.SMEM((16, 32), jnp.float32), plgpu.Barrier(),
                     plgpu.ClusterBarrier(collective_axes=("cluster",))],
      cluster=(2,),
      cluster_names=("cluster",),
  )
  x = jnp.arange(48 * 32, dtype=jnp.float32).reshape(48, 32)
  return kernel, [x]
