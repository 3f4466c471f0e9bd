"""For `collfuzz import`: a split-K style sum with a reducing TMA store, written as a kernel
engineer writes it (not one of JAX's tests; corpus/kernels/split_k_tile_sum.json is its
hand-written case with the expectations derived by hand).

Tile 0 of x is loaded and stored to y; then `lax.fori_loop(1, 4, step)` loads tile i into the
same SMEM tile on the same barrier (its phase flips every trip) and adds it into y with
`copy_smem_to_gmem(..., reduction_op="add")`. `wait_smem_to_gmem(0)` ends each store's read of the
tile before the next trip's load overwrites it. Expected: y[j] = sum_t x[t, j] = 4 j + 768.
JAX's interpret mode has no reducing store: it raises at trip 1.
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl  # noqa: F401  (the kernels of this corpus import it)
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, y_ref, tile, bar):
    plgpu.copy_gmem_to_smem(x_ref.at[0], tile, bar)
    plgpu.barrier_wait(bar)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, y_ref)
    plgpu.wait_smem_to_gmem(0)

    def step(i, carry):
      plgpu.copy_gmem_to_smem(x_ref.at[i], tile, bar)
      plgpu.barrier_wait(bar)
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(tile, y_ref, reduction_op="add")
      plgpu.wait_smem_to_gmem(0)
      return carry

    lax.fori_loop(1, 4, step, None)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((128,), jnp.float32),
      scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier()],
  )
  x = jnp.arange(4 * 128, dtype=jnp.float32).reshape(4, 128)
  return kernel, [x]
