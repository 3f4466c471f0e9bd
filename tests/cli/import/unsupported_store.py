"""A kernel `collfuzz import` refuses: a vector store of a value it does not follow
(tests/cli/import_cli_test.cmake)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, o_ref):
    def scope(smem, bar):
      plgpu.copy_gmem_to_smem(x_ref, smem, bar)
      plgpu.barrier_wait(bar)
      o_ref[...] = jnp.exp(smem[...])  # line 14: exp is outside the case format

    pl.run_scoped(scope, plgpu.SMEM((128,), jnp.float32), plgpu.Barrier())

  kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))
  return kernel, [jnp.arange(1, 129, dtype=jnp.float32)]


def not_a_case():
  return 42
