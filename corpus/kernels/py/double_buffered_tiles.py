"""For `collfuzz import`: double buffering (pipeline slots), written as a kernel engineer writes it
(not one of JAX's tests).

One CTA, no cluster. Two SMEM tiles (`buf`, f32[2, 16, 32]) and two barriers (`bars`,
`plgpu.Barrier(num_barriers=2)`); `lax.fori_loop(0, 4, step)`: trip i loads tile i of x
(`x_ref.at[pl.ds(i * 16, 16)]`) into slot `i % 2` (`buf.at[i % 2]`, arriving on
`bars.at[i % 2]`), waits on that slot's barrier and stores the slot to
`y_ref.at[pl.ds(i * 16, 16)]`. Each barrier completes one phase every other trip: the waits are
on bars[0], bars[1], bars[0], bars[1] with phases 0, 0, 1, 1. The store's
`wait_smem_to_gmem(0)` ends its read of the slot before the slot is loaded again two trips later.
Expected: y == x.
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, y_ref, buf, bars):
    def step(i, carry):
      slot = i % 2
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(i * 16, 16)], buf.at[slot], bars.at[slot])
      plgpu.barrier_wait(bars.at[slot])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(buf.at[slot], y_ref.at[pl.ds(i * 16, 16)])
      plgpu.wait_smem_to_gmem(0)
      return carry

    lax.fori_loop(0, 4, step, None)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((64, 32), jnp.float32),
      scratch_types=[plgpu.SMEM((2, 16, 32), jnp.float32), plgpu.Barrier(num_barriers=2)],
  )
  x = jnp.arange(64 * 32, dtype=jnp.float32).reshape(64, 32)
  return kernel, [x]
