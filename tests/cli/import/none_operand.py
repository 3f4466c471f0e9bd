"""A kernel called with None for an absent operand, as JAX's shipped matmuls take it (bias=None):
None is no input of the case (tests/cli/import_cli_test.cmake)."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(src, dst, bar):
    plgpu.copy_gmem_to_smem(src, dst, bar, collective_axes="x")
    plgpu.barrier_wait(bar)

  kernel = plgpu.kernel(body, out_type=(),
                        scratch_types=[plgpu.SMEM((64, 64), jnp.float32), plgpu.Barrier()],
                        cluster=(2,), cluster_names=("x",))

  def call(x, bias=None):
    assert bias is None
    return kernel(x)

  return call, [jnp.full((64, 64), 3, jnp.float32), None]
