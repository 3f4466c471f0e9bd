"""For `collfuzz import`: tiles of a 2-d grid dealt out over a cluster with `plgpu.nd_loop`, written
as a kernel engineer writes it (not one of JAX's tests).

A cluster of 2 CTAs; `plgpu.nd_loop((2, 3), collective_axes="x")` deals the 6 tiles (m, n) of x
(16x96 f32, tiles of 8x32) out over the cluster axis: step s = t * 2 + lax.axis_index("x") of the
CTA's trip t is tile (s // 3, s % 3), so CTA 0 takes tiles (0, 0), (0, 2), (1, 1) and CTA 1 tiles
(0, 1), (1, 0), (1, 2), 3 trips each. Each trip copies its tile
(`x_ref.at[pl.ds(m * 8, 8), pl.ds(n * 32, 32)]`) into the CTA's SMEM tile with a plain
(non-collective) TMA copy on a barrier, waits (the barrier's phase flips every trip), fences the
SMEM (`commit_smem`) and stores the tile to the same place of y, waiting for the store to finish
reading the SMEM tile before the next trip's copy overwrites it. No CTA touches another's SMEM, so
no cluster sync is needed. Expected: y == x.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, y_ref, tile, bar):
    @plgpu.nd_loop((2, 3), collective_axes="x")
    def _(loop_info):
      m, n = loop_info.index
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(m * 8, 8), pl.ds(n * 32, 32)], tile, bar)
      plgpu.barrier_wait(bar)
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(tile, y_ref.at[pl.ds(m * 8, 8), pl.ds(n * 32, 32)])
      plgpu.wait_smem_to_gmem(0)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((2 * 8, 3 * 32), jnp.float32),
      scratch_types=[plgpu.SMEM((8, 32), jnp.float32), plgpu.Barrier()],
      cluster=(2,),
      cluster_names=("x",),
  )
  x = jnp.arange(2 * 8 * 3 * 32, dtype=jnp.float32).reshape(2 * 8, 3 * 32)
  return kernel, [x]
